#include "core/symbols/folding_rules.h"

namespace hucprof {

FoldingRules FoldingRules::defaults() {
  FoldingRules rules;
  rules.check_functions = {
      // mm/usercopy.c: the entry point and its out-of-line pieces.
      {"__check_object_size", "entry"},
      {"check_object_size", "entry"},  // the inline wrapper, out of line in some debug builds
      {"check_bogus_address", "entry"},
      {"usercopy_abort", "entry"},
      {"usercopy_warn", "entry"},
      {"check_heap_object", "heap_object"},  // out of line on some kernels, inlined on Debian's
      {"check_stack_object", "stack_object"},
      {"arch_within_stack_frames", "stack_object"},
      {"check_kernel_text_object", "kernel_text"},
      {"check_page_span", "page_span"},  // CONFIG_HARDENED_USERCOPY_PAGESPAN, before 5.16
      // What the sub-checks call into.
      {"__check_heap_object", "slab_object"},  // mm/slub.c: only ever for a slab object
      {"find_vmap_area", "vmap_area"},         // the rb-tree search under vmap_area_lock
      // arch/x86/mm/physaddr.c, behind virt_addr_valid(): every object in the linear map or the
      // kernel image on its way to the slab/page split, slab objects included.
      {"__virt_addr_valid", "virt_addr_valid"},
  };
  rules.copy_helpers = {
      // include/linux/uio.h, lib/iov_iter.c: iov_iter copies.
      "check_copy_size",
      "copy_to_iter",
      "_copy_to_iter",
      "copy_from_iter",
      "_copy_from_iter",
      "_copy_from_iter_nocache",
      "_copy_from_iter_flushcache",
      "copy_from_iter_full",
      "copy_from_iter_nocache",
      "copy_from_iter_full_nocache",
      "copy_mc_to_iter",
      "_copy_mc_to_iter",
      "copy_page_to_iter",
      "copy_page_to_iter_nofault",
      "copy_page_from_iter",
      "copy_page_from_iter_atomic",
      "copy_folio_to_iter",
      "copy_folio_from_iter",
      "copy_to_user_iter",
      "copy_from_user_iter",
      "copy_to_user_iter_csum",
      "copy_from_user_iter_csum",
      "csum_and_copy_from_iter_full",
      "csum_and_copy_to_iter",
      "hash_and_copy_to_iter",
      "iterate_iovec",
      "iterate_ubuf",
      "iterate_and_advance",
      "iterate_and_advance2",
      "__iterate_and_advance",
      // iovec and msghdr import: the copy of the user's descriptors, not of the payload.
      "import_iovec",
      "__import_iovec",
      "iovec_from_user",
      "copy_iovec_from_user",
      "copy_msghdr_from_user",
      "__copy_msghdr",
      "recvmsg_copy_msghdr",
      "sendmsg_copy_msghdr",
      // include/linux/uaccess.h, mm/util.c: plain user copies.
      "copy_to_user",
      "_copy_to_user",
      "copy_from_user",
      "_copy_from_user",
      "__copy_to_user",
      "__copy_from_user",
      "__copy_to_user_inatomic",
      "__copy_from_user_inatomic",
      "_inline_copy_to_user",
      "_inline_copy_from_user",
      "copy_to_user_nofault",
      "copy_from_user_nofault",
      "copy_struct_from_user",
      "strncpy_from_user",
      "memdup_user",
      "memdup_user_nul",
      "vmemdup_user",
      "strndup_user",
      "memdup_array_user",
      "vmemdup_array_user",
      "copy_to_sockptr",
      "copy_to_sockptr_offset",
      "copy_from_sockptr",
      "copy_from_sockptr_offset",
      "copy_safe_from_sockptr",
      // net/core/datagram.c, net/core/skbuff.c: skb ↔ iov_iter.
      "simple_copy_to_iter",
      "__skb_datagram_iter",
      "skb_copy_datagram_iter",
      "skb_copy_datagram_msg",
      "skb_copy_datagram_from_iter",
      "skb_copy_datagram_from_iter_full",
      "skb_copy_and_csum_datagram",
      "skb_copy_and_csum_datagram_msg",
      "skb_copy_and_hash_datagram_iter",
      "skb_copy_and_crc32c_datagram_iter",
      "skb_add_data",
      "skb_do_copy_data_nocache",
      "skb_copy_to_page_nocache",
      "copy_linear_skb",
      "memcpy_to_msg",
      "memcpy_from_msg",
      // net/socket.c, net/core/scm.c: addresses and control messages.
      "put_cmsg",
      "move_addr_to_user",
      "move_addr_to_kernel",
      // net/ipv4, net/ipv6: building an skb from the user's buffer on send.
      "ip_generic_getfrag",
      "ip_append_data",
      "__ip_append_data",
      "ip_make_skb",
      "ip6_append_data",
      "__ip6_append_data",
      "ip6_make_skb",
  };
  rules.check_wrappers = {
      "check_object_size",  // include/linux/thread_info.h (ucopysize.h from 6.15)
      "check_copy_size",
      "__check_object_size",
  };
  return rules;
}

}  // namespace hucprof
