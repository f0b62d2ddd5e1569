#!/bin/sh
# ExecStart of hucvm-test.service: run the checks ($HUCVM_SCRIPT) in the results share with the
# harness environment (.hucvm-env, written by qemu_run.run_vm), save the boot journal, and leave
# the exit status in .hucvm-rc the way tests/vm/guest/init.sh does. Always exits 0: the unit's
# SuccessAction=/FailureAction= power the VM off either way.
cd "$HUCVM_RESULTS" || { echo "HUCVM-FAIL: no results dir $HUCVM_RESULTS"; exit 1; }
# shellcheck disable=SC1091  # written by qemu_run.run_vm at run time
. ./.hucvm-env
export HUCVM_RESULTS HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
cut -d' ' -f1 /proc/uptime > .hucvm-start-uptime
echo "HUCVM: start $HUCVM_SCRIPT under systemd at uptime $(cat .hucvm-start-uptime)s"
/usr/bin/python3 -B "$HUCVM_SCRIPT"
rc=$?
journalctl -b --no-pager -o short-monotonic > journal.txt 2>&1
cut -d' ' -f1 /proc/uptime > .hucvm-end-uptime
echo "$rc" > .hucvm-rc
echo "HUCVM: rc=$rc at uptime $(cat .hucvm-end-uptime)s"
sync
exit 0
