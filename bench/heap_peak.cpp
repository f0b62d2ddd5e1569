#include "heap_peak.h"

#include <malloc.h>

#include <atomic>
#include <cerrno>
#include <cstring>

// glibc's own allocator, under the names it exports for allocators that wrap it.
extern "C" {
void* __libc_malloc(size_t size);
void* __libc_calloc(size_t n, size_t size);
void* __libc_realloc(void* p, size_t size);
void* __libc_memalign(size_t alignment, size_t size);
void __libc_free(void* p);
}

namespace {

std::atomic<size_t> live{0};
std::atomic<size_t> peak{0};

void* counted(void* p) {
  if (p) {
    const size_t now = live += malloc_usable_size(p);
    size_t was = peak.load(std::memory_order_relaxed);
    while (now > was && !peak.compare_exchange_weak(was, now)) {
    }
  }
  return p;
}

void uncount(void* p) {
  if (p) live -= malloc_usable_size(p);
}

}  // namespace

extern "C" {

void* malloc(size_t size) { return counted(__libc_malloc(size)); }
void* calloc(size_t n, size_t size) { return counted(__libc_calloc(n, size)); }
void free(void* p) {
  uncount(p);
  __libc_free(p);
}
void* realloc(void* p, size_t size) {
  uncount(p);
  void* moved = __libc_realloc(p, size);
  if (!moved && size != 0) return counted(p);  // failed: p is still there
  return counted(moved);
}
void* memalign(size_t alignment, size_t size) { return counted(__libc_memalign(alignment, size)); }
void* aligned_alloc(size_t alignment, size_t size) { return memalign(alignment, size); }
int posix_memalign(void** out, size_t alignment, size_t size) {
  void* p = memalign(alignment, size);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}

}  // extern "C"

namespace hucprof::bench {

size_t heap_live() { return live.load(); }
size_t heap_peak() { return peak.load(); }
void reset_heap_peak() { peak.store(live.load()); }

}  // namespace hucprof::bench
