"""Decode threads against the machine's load: the rule, the measurement and the governor that follows it."""

from __future__ import annotations

import pytest

from localjudge import _cpu as cpu
from localjudge._cpu import CpuSample, ThreadGovernor, default_threads, others_busy, threads_for


@pytest.mark.parametrize(
    ("cpus", "busy_elsewhere", "threads"),
    [
        (2, 0.0, 2),  # an idle two-core machine: both
        (2, 0.1, 2),  # a little other work leaves the second CPU nearly whole
        (2, 0.5, 1),  # half a CPU taken: the second thread would wait for it
        (2, 2.0, 1),  # all taken: still one
        (2, 9.0, 1),
        (8, 0.0, 4),  # larger machines: at most half (about the physical cores)
        (8, 5.0, 3),
        (1, 0.0, 1),
    ],
)
def test_threads_follow_the_cpus_other_work_leaves_free(cpus, busy_elsewhere, threads):
    assert threads_for(cpus, busy_elsewhere) == threads
    assert 1 <= threads <= default_threads(cpus)


def test_the_load_of_others_is_the_machines_less_this_processs():
    before = CpuSample(wall=10.0, machine_busy=100.0, own=40.0)
    after = CpuSample(wall=12.0, machine_busy=104.0, own=42.0)  # 4 CPU-seconds in 2 s, 2 of them ours
    assert others_busy(before, after) == pytest.approx(1.0)
    assert others_busy(before, before) == 0.0
    assert others_busy(before, CpuSample(12.0, 101.0, 43.0)) == 0.0  # counters read apart: never negative


def test_the_real_counters_can_be_read_here():
    sample = cpu.sample_cpu()
    assert sample is not None and sample.machine_busy > 0 and sample.own > 0


def test_a_count_the_user_gave_is_kept_whatever_the_load(monkeypatch):
    monkeypatch.setattr(cpu, "sample_cpu", lambda: pytest.fail("a fixed count reads no load"))
    governor = ThreadGovernor(3)
    assert (governor.current, governor.threads()) == (3, 3)
    assert "fixed at 3" in governor.rule


def test_the_governor_re_measures_after_its_interval_and_not_before(monkeypatch):
    samples = iter(
        [
            CpuSample(0.0, 0.0, 0.0),
            CpuSample(0.05, 0.0, 0.0),  # the first look: an idle machine
            CpuSample(3.0, 5.9, 0.0),  # others kept 2 CPUs busy since the first look
            CpuSample(6.0, 8.9, 3.0),  # since then, 3 CPU-seconds, all of them ours
        ]
    )
    clock = iter([0.06, 3.0, 6.0])
    monkeypatch.setattr(cpu, "sample_cpu", lambda: next(samples))
    monkeypatch.setattr(cpu.time, "sleep", lambda seconds: None)
    governor = ThreadGovernor(interval=2.0, cpus=2)
    assert governor.current == 2
    monkeypatch.setattr(cpu.time, "monotonic", lambda: next(clock))
    assert governor.threads() == 2  # 0.01 s after the last look: the count stands
    assert governor.threads() == 1  # busy elsewhere
    assert governor.threads() == 2  # free again


def test_without_proc_stat_the_count_is_the_default(monkeypatch):
    monkeypatch.setattr(cpu, "sample_cpu", lambda: None)
    governor = ThreadGovernor(cpus=2)
    assert governor.threads() == 2 and "cannot be read" in governor.rule
