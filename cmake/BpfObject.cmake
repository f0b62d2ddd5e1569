# bpf_object(NAME SOURCE [DEFINES MACRO...])
# Compiles SOURCE (-DMACRO for each of DEFINES) with clang -target bpf (CO-RE, BTF, -Werror),
# with a depfile so that editing any included header rebuilds the object, then generates
# NAME.skel.h with bpftool.
# Creates the INTERFACE target bpf_NAME that carries the skeleton's include directory.
find_program(BPF_CLANG clang REQUIRED)
find_program(BPFTOOL bpftool REQUIRED)

# The BPF objects are built for the kernel of the architecture hucprof is built for (the CMake
# target, which a toolchain file sets when cross-building): __TARGET_ARCH_<arch> selects the
# register reads in bpf/arch_reads.bpf.h and bpf_tracing.h, bpf/vmlinux/<arch>/ the kernel types.
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  set(HUC_BPF_ARCH x86)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64|ARM64)$")
  set(HUC_BPF_ARCH arm64)
else()
  message(FATAL_ERROR "hucprof's BPF programs support x86_64 and aarch64, not ${CMAKE_SYSTEM_PROCESSOR}")
endif()
set(HUC_VMLINUX_DIR ${PROJECT_SOURCE_DIR}/bpf/vmlinux/${HUC_BPF_ARCH})
set(HUC_BPF_ARCHES x86 arm64)

function(bpf_object name source)
  cmake_parse_arguments(PARSE_ARGV 2 arg "" "" "DEFINES")
  list(TRANSFORM arg_DEFINES PREPEND "-D")
  string(JOIN " " defines_text ${arg_DEFINES})
  set(obj ${CMAKE_CURRENT_BINARY_DIR}/${name}.bpf.o)
  set(skel ${CMAKE_CURRENT_BINARY_DIR}/${name}.skel.h)
  set(dep ${CMAKE_CURRENT_BINARY_DIR}/${name}.bpf.d)
  get_filename_component(src ${source} ABSOLUTE)
  add_custom_command(
    OUTPUT ${obj}
    COMMAND ${BPF_CLANG} -g -O2 -Wall -Werror -target bpf -D__TARGET_ARCH_${HUC_BPF_ARCH}
            ${arg_DEFINES} -I${HUC_VMLINUX_DIR} -I${PROJECT_SOURCE_DIR}/bpf
            -MD -MF ${dep} -c ${src} -o ${obj}
    DEPENDS ${src}
    DEPFILE ${dep}
    COMMENT "BPF ${name}.bpf.c"
    VERBATIM)
  add_custom_command(
    OUTPUT ${skel}
    COMMAND ${BPFTOOL} gen skeleton ${obj} name ${name}_bpf > ${skel}
    DEPENDS ${obj}
    COMMENT "BPF skeleton ${name}.skel.h"
    VERBATIM)
  add_custom_target(bpf_${name}_gen DEPENDS ${skel})
  # The other architectures' objects are not built here, but must compile and yield a skeleton:
  # a cheap unit test (about a second each) that keeps arm64 honest on an x86 CI machine and
  # the other way round.
  foreach(arch IN LISTS HUC_BPF_ARCHES)
    if(NOT arch STREQUAL HUC_BPF_ARCH)
      set(other ${CMAKE_CURRENT_BINARY_DIR}/${arch}/${name}.bpf.o)
      add_test(NAME bpf_${name}_compiles_${arch}
               COMMAND sh -c "mkdir -p \"$1\" && \"$2\" -g -O2 -Wall -Werror -target bpf -D__TARGET_ARCH_${arch} ${defines_text} -I\"$3\" -I\"$4\" -c \"$5\" -o \"$1/${name}.bpf.o\" && \"$6\" gen skeleton \"$1/${name}.bpf.o\" name ${name}_bpf > \"$1/${name}.skel.h\""
                       sh ${CMAKE_CURRENT_BINARY_DIR}/${arch} ${BPF_CLANG}
                       ${PROJECT_SOURCE_DIR}/bpf/vmlinux/${arch} ${PROJECT_SOURCE_DIR}/bpf ${src} ${BPFTOOL})
      set_tests_properties(bpf_${name}_compiles_${arch} PROPERTIES LABELS unit TIMEOUT 120)
    endif()
  endforeach()
  add_library(bpf_${name} INTERFACE)
  add_dependencies(bpf_${name} bpf_${name}_gen)
  target_include_directories(bpf_${name} INTERFACE ${CMAKE_CURRENT_BINARY_DIR} ${PROJECT_SOURCE_DIR}/bpf)
endfunction()
