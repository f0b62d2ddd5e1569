#pragma once
// The heap a piece of code holds at its most, counted by a malloc of the benchmark's own
// (heap_peak.cpp, linked into the benchmark: it stands in for glibc's and counts every block
// malloc_usable_size reports, operator new's included).
#include <cstddef>

namespace hucprof::bench {

size_t heap_live();  // bytes in blocks not freed
size_t heap_peak();  // the most heap_live() has been since reset_heap_peak()
// From now on heap_peak() starts at heap_live(); returns that heap_live(), the base to subtract
// from heap_peak() (read apart from the reset, a free in between would put it above the peak).
size_t reset_heap_peak();

}  // namespace hucprof::bench
