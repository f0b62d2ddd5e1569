// SPDX-License-Identifier: GPL-2.0
/*
 * Provokes, inside a VM-tier guest, the three kinds of lockup the harness must tell apart
 * (tests/vm/console_triage.py), so that real consoles of them can be captured from Debian's own
 * kernels (capture.py). Never loaded by a test.
 *
 *   mode=ipi    CPU `victim` spins with interrupts off, then this CPU flips a static key:
 *               text_poke_bp's sync waits in smp_call_function for the victim for ever, the
 *               shape of the TCG text-patching artefact (no BPF anywhere). Both from here:
 *               user space may not get far once the victim stops taking interrupts (a 9p
 *               virtqueue's interrupt may be routed to it).
 *   mode=check  this CPU calls __check_object_size in a loop with preemption off: with
 *               hucprof's probes attached, a lockup with BPF and probe targets on its stack.
 *   mode=spin   this CPU spins with preemption off: a lockup that is neither.
 */
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/jump_label.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <linux/thread_info.h>
#include <linux/timekeeping.h>
#include <linux/workqueue.h>

static char *mode = "spin";
module_param(mode, charp, 0444);
static int secs = 600;
module_param(secs, int, 0444);
static int victim = 1;
module_param(victim, int, 0444);
/* Not a compile-time constant, or check_object_size() would skip the check. */
static int len = 64;
module_param(len, int, 0444);

static u64 deadline(void)
{
	return ktime_get_mono_fast_ns() + (u64)secs * NSEC_PER_SEC;
}

static noinline void hucvm_spin_irqs_off(void *unused)
{
	u64 end = deadline();

	while (ktime_get_mono_fast_ns() < end)
		cpu_relax();
}

static atomic_t hucvm_victim_spinning = ATOMIC_INIT(0);
DEFINE_STATIC_KEY_FALSE(hucvm_key);

static void hucvm_victim_work(struct work_struct *work)
{
	local_irq_disable();
	atomic_set(&hucvm_victim_spinning, 1);
	hucvm_spin_irqs_off(NULL);
	local_irq_enable();
}
static DECLARE_WORK(hucvm_victim, hucvm_victim_work);

static noinline int hucvm_flip_key_while_victim_spins(void)
{
	int waited_ms = 0;

	queue_work_on(victim, system_highpri_wq, &hucvm_victim);
	while (!atomic_read(&hucvm_victim_spinning)) {
		if (waited_ms > 10000)
			return -ETIMEDOUT;
		msleep(10);
		waited_ms += 10;
	}
	static_branch_enable(&hucvm_key);
	/* The key's only user: never reached before the victim is done. */
	if (static_branch_unlikely(&hucvm_key))
		pr_info("hucvm_lockup: static key flipped\n");
	return 0;
}

static noinline void hucvm_spin_preempt_off(bool check)
{
	u64 end = deadline();
	void *buf = kmalloc(len, GFP_KERNEL);

	if (!buf)
		return;
	preempt_disable();
	while (ktime_get_mono_fast_ns() < end) {
		if (check)
			__check_object_size(buf, len, true);
		cpu_relax();
	}
	preempt_enable();
	kfree(buf);
}

static int __init hucvm_lockup_init(void)
{
	if (!strcmp(mode, "ipi")) {
		if (victim == raw_smp_processor_id() || !cpu_online(victim))
			return -EINVAL;
		return hucvm_flip_key_while_victim_spins();
	}
	if (!strcmp(mode, "check") || !strcmp(mode, "spin")) {
		hucvm_spin_preempt_off(mode[0] == 'c');
		return 0;
	}
	return -EINVAL;
}

static void __exit hucvm_lockup_exit(void)
{
}

module_init(hucvm_lockup_init);
module_exit(hucvm_lockup_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("hucprof VM harness: provoke lockups to capture their consoles");
