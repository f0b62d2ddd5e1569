/* A small program with the shape of the kernel's UDP receive copy: udp_recvmsg inlines
 * copy_linear_skb -> copy_to_iter -> check_copy_size -> check_object_size, which calls the real
 * __check_object_size. The build compiles it with -g -O2 (an executable, and an object file that
 * stands for a module), and the debuginfo tests resolve its addresses against addr2line's
 * answers. Never run. */
#include <stddef.h>

#define __always_inline inline __attribute__((always_inline))

struct iov_iter {
  char *buf;
  size_t left;
};

/* The kernel's _stext: where text offsets count from. */
__attribute__((noinline, used)) void _stext(void) { __asm__ volatile(""); }

__attribute__((noinline)) void __check_object_size(const void *ptr, size_t n, int to_user) {
  __asm__ volatile("" : : "r"(ptr), "r"(n), "r"(to_user) : "memory");
}

__attribute__((noinline)) size_t _copy_to_iter(const void *from, size_t n, struct iov_iter *i) {
  size_t done = n < i->left ? n : i->left;
  __builtin_memcpy(i->buf, from, done);
  i->buf += done;
  i->left -= done;
  return done;
}

static __always_inline void check_object_size(const void *ptr, size_t n, int to_user) {
  if (!__builtin_constant_p(n)) __check_object_size(ptr, n, to_user);
}

static __always_inline int check_copy_size(const void *addr, size_t bytes, int is_source) {
  if (bytes > (size_t)1 << 30) return 0;
  check_object_size(addr, bytes, is_source);
  return 1;
}

static __always_inline size_t copy_to_iter(const void *addr, size_t bytes, struct iov_iter *i) {
  if (check_copy_size(addr, bytes, 1)) return _copy_to_iter(addr, bytes, i);
  return 0;
}

static __always_inline int copy_linear_skb(const char *data, size_t len, int off,
                                           struct iov_iter *to) {
  return copy_to_iter(data + off, len, to) == len ? 0 : -14;
}

__attribute__((noinline)) int udp_recvmsg(const char *data, size_t len, struct iov_iter *to) {
  int err = copy_linear_skb(data, len, 0, to);
  return err ? err : (int)len;
}

#ifdef HUC_MODULE_BUILD_ID
/* An object file has no build-id of its own; a module has one (as every .ko has). */
__asm__(".pushsection .note.gnu.build-id, \"a\", %note\n"
        ".balign 4\n.long 4\n.long 20\n.long 3\n.asciz \"GNU\"\n"
        ".byte 0xd4,0x51,0x4c,0x0c,0x87,0x89,0xc5,0xc6,0x9a,0x83,"
        "0xc5,0x76,0x2a,0xd5,0x8b,0x0f,0x43,0xa5,0xd9,0x4e\n"
        ".popsection\n");
#else
int main(int argc, char **argv) {
  char out[64];
  struct iov_iter it = {out, sizeof(out)};
  return udp_recvmsg(argv[0], (size_t)argc, &it) < 0;
}
#endif
