"""formats/propagated_hlo.py: the instructions of HLO text as XLA dumps them after propagation
(lines as jaxlib 0.10.2's CPU client wrote them for testdata/torch_xla/matmul_2x4.mlir and a
HF GPT-2 graph)."""

from __future__ import annotations

import pytest

from shardy_convert.formats.propagated_hlo import instructions

# Each instruction is one line in the file; split here only to keep the source narrow.
DUMPED = "".join(
    [
        "HloModule IrToHlo.18, entry_computation_layout={(f32[8,8]{1,0})->f32[8,8]{1,0}}, "
        "num_partitions=8\n\n",
        "%region_0.1 (Arg_0.2: f32[], Arg_1.2: f32[]) -> f32[] {\n",
        "  %Arg_0.2 = f32[] parameter(0)\n",
        "  %Arg_1.2 = f32[] parameter(1)\n",
        '  ROOT %sc_op.3 = f32[] add(%Arg_0.2, %Arg_1.2), metadata={op_name="sc.op.3"}\n',
        "}\n\n",
        "ENTRY %main.1 (Arg_0.1: f32[8,8]) -> f32[8,8] {\n",
        "  %Arg_0.1 = f32[8,8]{1,0} parameter(0), sharding={devices=[2,4]0,1,2,3,4,5,6,7}\n",
        "  %sc_op.1 = f32[8,8]{1,0} multiply(%Arg_0.1, %Arg_0.1), sharding={devices=[4,2]<=[2,4]"
        'T(1,0)}, metadata={op_name="sc.op.1" stack_frame_id=4}\n',
        "  %sc_op.200 = (f32[1,64,32]{2,1,0}, f32[64]{0}, f32[64]{0}) batch-norm-training("
        "%sc_op.1, %c, %c), epsilon=1e-05, feature_index=1, sharding={{devices=[1,2,1,4]<=[8] "
        "last_tile_dim_replicate}, {replicated}, {replicated}}, "
        'metadata={op_name="sc.op.29" stack_frame_id=26}\n',
        "  %sc_op.202 = f32[64]{0} get-tuple-element(%sc_op.200), index=1, "
        'metadata={op_name="sc.op.29"}\n',
        "  ROOT %copy = f32[8,8]{1,0} copy(%sc_op.1), sharding={replicated}\n",
        "}\n",
    ]
)


@pytest.fixture(scope="module")
def found():
    return {i.name: i for i in instructions(DUMPED)}


def test_an_instruction_with_its_sharding_metadata_and_operands(found):
    inst = found["sc_op.1"]
    assert (inst.opcode, inst.shape, inst.operands) == (
        "multiply",
        "f32[8,8]{1,0}",
        ("Arg_0.1", "Arg_0.1"),
    )
    assert inst.sharding == "{devices=[4,2]<=[2,4]T(1,0)}"
    assert (inst.op_name, inst.computation) == ("sc.op.1", "main.1")


def test_a_tuple_shape_and_a_tuple_sharding_are_read_whole(found):
    inst = found["sc_op.200"]
    assert inst.shape == "(f32[1,64,32]{2,1,0}, f32[64]{0}, f32[64]{0})"
    assert inst.opcode == "batch-norm-training"
    assert inst.sharding == (
        "{{devices=[1,2,1,4]<=[8] last_tile_dim_replicate}, {replicated}, {replicated}}"
    )


def test_a_get_tuple_element_has_its_index_and_no_sharding_when_xla_wrote_none(found):
    inst = found["sc_op.202"]
    assert (inst.index, inst.sharding, inst.op_name) == (1, None, "sc.op.29")
    assert found["sc_op.1"].index is None


def test_instructions_of_called_computations_name_their_computation(found):
    assert found["sc_op.3"].computation == "region_0.1"
    assert found["Arg_0.2"].sharding is None
    assert found["copy"].op_name == ""
