"""torch_xla's SPMD API where PyTorch/XLA's own test/spmd suite found the wrapper apart from
the built-in runtime (issue 27; e2e/torch_xla_suite.py runs that suite): one program per case
(e2e/api_programs.py), through the wrapper on xla-cpu-pjrt and on torch_xla's built-in CPU
runtime, the values and the specs a user reads back compared. Same rules as
test_torch_xla.py (arrays compared as e2e/compare.py says; the specs, strings, exactly)."""

from __future__ import annotations

from e2e.test_torch_xla import (
    _torch_xla_is_installed,  # noqa: F401  (autouse: fail, never skip, without torch_xla)
    assert_only_shardy,
    assert_ran,
    run,
)

from .compare import assert_same


def test_shard_as_puts_both_tensors_in_one_sharding_group(tmp_path):
    # torch_xla needs torchax (and jax) for xs.shard_as: pip install torchax
    cpu, ours = run(tmp_path, "shard_as_pair")
    assert_ran(cpu), assert_ran(ours)
    assert_only_shardy(ours)
    assert str(ours["arrays"]["spec.y"]) == "{devices=[8]0,1,2,3,4,5,6,7}"
    assert_same(cpu, ours)


def test_specs_read_back_as_the_built_in_runtime_spells_them(tmp_path):
    cpu, ours = run(tmp_path, "spec_spelling")
    assert_ran(cpu), assert_ran(ours)
    assert_only_shardy(ours)
    assert str(ours["arrays"]["spec.u"]) == "{devices=[1,8]0,1,2,3,4,5,6,7}"
    assert_same(cpu, ours)


def test_uneven_shardings_run_with_gspmds_padded_layout(tmp_path):
    cpu, ours = run(tmp_path, "uneven_fsdp")
    assert_ran(cpu), assert_ran(ours)
    assert_only_shardy(ours)
    assert ours["counters"]["failed"] == ours["counters"]["passed_through"] == 0
    assert_same(cpu, ours)


def test_passthrough_compiles_the_callees_shardings_on_main(tmp_path):
    cpu, ours = run(tmp_path, "passthrough_callee_shardings", "--on-error", "passthrough")
    assert_ran(cpu), assert_ran(ours)
    assert ours["counters"]["passed_through"] >= 1
    assert_same(cpu, ours)


def test_a_refused_program_leaves_the_process_usable(tmp_path):
    cpu, ours = run(tmp_path, "refused_then_usable")
    assert_ran(cpu), assert_ran(ours)
    assert "a manual region's boundary has no padded form" in str(ours["arrays"].pop("refused"))
    assert str(cpu["arrays"].pop("refused")) == ""
    assert ours["counters"]["failed"] == 1
    assert_same(cpu, ours)
