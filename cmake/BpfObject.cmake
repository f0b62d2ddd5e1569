# bpf_object(NAME SOURCE [DEPENDS headers...])
# Compiles bpf/NAME.bpf.c with clang -target bpf (CO-RE, BTF, -Werror), with a depfile so that
# editing any included header rebuilds the object, then generates NAME.skel.h with bpftool.
# Creates the INTERFACE target bpf_NAME that carries the skeleton's include directory.
find_program(BPF_CLANG clang REQUIRED)
find_program(BPFTOOL bpftool REQUIRED)

set(HUC_BPF_ARCH x86)
set(HUC_VMLINUX_DIR ${PROJECT_SOURCE_DIR}/bpf/vmlinux/${HUC_BPF_ARCH})

function(bpf_object name source)
  set(obj ${CMAKE_CURRENT_BINARY_DIR}/${name}.bpf.o)
  set(skel ${CMAKE_CURRENT_BINARY_DIR}/${name}.skel.h)
  set(dep ${CMAKE_CURRENT_BINARY_DIR}/${name}.bpf.d)
  get_filename_component(src ${source} ABSOLUTE)
  add_custom_command(
    OUTPUT ${obj}
    COMMAND ${BPF_CLANG} -g -O2 -Wall -Werror -target bpf -D__TARGET_ARCH_${HUC_BPF_ARCH}
            -I${HUC_VMLINUX_DIR} -I${PROJECT_SOURCE_DIR}/bpf
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
  add_library(bpf_${name} INTERFACE)
  add_dependencies(bpf_${name} bpf_${name}_gen)
  target_include_directories(bpf_${name} INTERFACE ${CMAKE_CURRENT_BINARY_DIR} ${PROJECT_SOURCE_DIR}/bpf)
endfunction()
