#include "heap_peak.h"

#include <malloc.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
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
// glibc's valloc, pvalloc and reallocarray call its allocator inside, never malloc: blocks this
// file would not count and free() would then take off, taking `live` below the truth.
void* valloc(size_t size) { return memalign(static_cast<size_t>(getpagesize()), size); }
void* pvalloc(size_t size) {
  const size_t page = static_cast<size_t>(getpagesize());
  if (size > SIZE_MAX - page) {
    errno = ENOMEM;
    return nullptr;
  }
  return memalign(page, (size + page - 1) / page * page);
}
void* reallocarray(void* p, size_t n, size_t size) {
  if (size != 0 && n > SIZE_MAX / size) {
    errno = ENOMEM;
    return nullptr;
  }
  return realloc(p, n * size);
}
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
size_t reset_heap_peak() {
  const size_t now = live.load();
  peak.store(now);
  return now;
}

}  // namespace hucprof::bench
