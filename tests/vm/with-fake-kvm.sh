#!/bin/sh
# with-fake-kvm.sh CMD [ARG...]: runs CMD on this machine as if it were the one of issue 8, whose
# /dev/kvm opens and answers KVM_GET_API_VERSION but whose KVM guests never get past SeaBIOS's
# "Booting from ROM...". In a private mount namespace (nothing changes for other processes):
# /dev gets an overlay holding an extra /dev/kvm (a plain file: it opens read-write), and
# testdata/fake-qemu-nested-kvm is first in PATH as qemu-system-x86_64 (KVM boots hang, every
# other boot is the real qemu's). The VM tier must then say it probed KVM, found it unusable and
# uses TCG. Root only. E.g.: tests/vm/with-fake-kvm.sh scripts/test.sh -L vm
set -eu
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -lt 1 ]; then
    echo "usage: $0 CMD [ARG...]" >&2
    exit 2
fi
real=$(command -v qemu-system-x86_64) || { echo "$0: qemu-system-x86_64 not installed" >&2; exit 1; }
# shellcheck disable=SC2016  # expanded by the inner shell
exec unshare --mount --propagation private -- sh -euc '
here=$1 real=$2
shift 2
# Not under /tmp: VM guests bind every host /tmp directory into their own /tmp.
top=$(mktemp -d /run/hucvm-fake-kvm.XXXXXX)
mount -t tmpfs -o mode=755 tmpfs "$top"
mkdir "$top/bin" "$top/olddev" "$top/upper" "$top/work"
ln -s "$here/testdata/fake-qemu-nested-kvm" "$top/bin/qemu-system-x86_64"
# The real /dev (with its submounts) stays reachable for the re-binds below.
mount --rbind /dev "$top/olddev"
mount -t overlay overlay -o "lowerdir=/dev,upperdir=$top/upper,workdir=$top/work" /dev
for m in $(awk "\$2 ~ \"^/dev/\" && \$2 !~ \"^/dev/kvm\$\" {print \$2}" /proc/self/mounts \
           | sort -u); do
    [ -d "$top/olddev${m#/dev}" ] || continue
    mkdir -p "$m" && mount --rbind "$top/olddev${m#/dev}" "$m"
done
rm -f /dev/kvm
: > /dev/kvm
chmod 666 /dev/kvm
export HUCVM_REAL_QEMU="$real" PATH="$top/bin:$PATH"
echo "with-fake-kvm: /dev/kvm is a fake ($(stat -c %F /dev/kvm)), qemu-system-x86_64 is" \
     "$(command -v qemu-system-x86_64) -> $here/testdata/fake-qemu-nested-kvm" >&2
rc=0
"$@" || rc=$?
umount -R -l /dev
umount -R -l "$top"
rmdir "$top"
exit "$rc"
' sh "$here" "$real" "$@"
