# Turns "#define __NR_read 0" lines of asm/unistd_64.h into "{0, "read"}," entries.
file(STRINGS ${IN} lines REGEX "^#define __NR_[a-z0-9_]+ [0-9]+$")
set(out "// Generated from ${IN} by cmake/GenSyscallTable.cmake. Do not edit.\n")
foreach(line ${lines})
  string(REGEX REPLACE "^#define __NR_([a-z0-9_]+) ([0-9]+)$" "{\\2, \"\\1\"}," entry "${line}")
  string(APPEND out "${entry}\n")
endforeach()
file(WRITE ${OUT} "${out}")
