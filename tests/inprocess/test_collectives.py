"""Collectives counted from compiled HLO text (issue 25): by kind, with their result bytes, an async pair once, in
the computations the entry calls, each once. Hand-written HLO in XLA's text form (what `Compiled.as_text()`
prints), so the counting is checked without several devices; tests/e2e/test_devices.py counts real compiles."""

from __future__ import annotations

from jitexp.worker.attribution import collective_counts, hlo_counts

HLO = """HloModule jit_step, entry_computation_layout={(f32[8,16]{1,0})->f32[]}

%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %add = f32[] add(%x, %y)
}

%body (p: (s32[], f32[4,16])) -> (s32[], f32[4,16]) {
  %p = (s32[], f32[4,16]{1,0}) parameter(0)
  %v = f32[4,16]{1,0} get-tuple-element(%p), index=1
  %rs = f32[1,16]{1,0} reduce-scatter(%v), channel_id=3, replica_groups={{0,1,2,3}}, dimensions={0}, to_apply=%add
  %i = s32[] get-tuple-element(%p), index=0
  ROOT %t = (s32[], f32[4,16]{1,0}) tuple(%i, %v)
}

%cond (p: (s32[], f32[4,16])) -> pred[] {
  %p = (s32[], f32[4,16]{1,0}) parameter(0)
  ROOT %c = pred[] constant(false)
}

%unused (a: f32[2]) -> f32[2] {
  %a = f32[2]{0} parameter(0)
  ROOT %ar = f32[2]{0} all-reduce(%a), channel_id=9, to_apply=%add
}

ENTRY %main (x: f32[8,16]) -> f32[] {
  %x = f32[8,16]{1,0} parameter(0)
  %ags = (f32[2,16]{1,0}, f32[8,16]{1,0}) all-gather-start(%x), channel_id=1, dimensions={0}
  %agd = f32[8,16]{1,0} all-gather-done(%ags)
  %all-reduce.7 = (f32[256]{0}, f32[256,32]{1,0}, f32[256]{0}, f32[10]{0}, /*index=4*/f32[10,256]{1,0}, f32[]) all-reduce(%x, %x, %x, %x, %x, %x), channel_id=2, to_apply=%add
  %w = (s32[], f32[4,16]{1,0}) while(%init), condition=%cond, body=%body
  %cp = bf16[4]{0} collective-permute(%y), channel_id=4, source_target_pairs={{0,1},{1,0}}
  ROOT %r = f32[] reduce(%agd, %c0), dimensions={0,1}, to_apply=%add
}
"""


def test_each_kind_is_counted_with_its_result_bytes_an_async_pair_once_and_called_computations_once():
    row = collective_counts(HLO)
    assert (row["all_gather_count"], row["all_gather_bytes"]) == (1, 8 * 16 * 4)  # the gathered array, not the pair
    # one all-reduce of six buffers: 256 + 256*32 + 256 + 10 + 10*256 floats and one scalar
    assert (row["all_reduce_count"], row["all_reduce_bytes"]) == (1, (256 + 8192 + 256 + 10 + 2560 + 1) * 4)
    assert (row["reduce_scatter_count"], row["reduce_scatter_bytes"]) == (1, 16 * 4)  # in the while body
    assert (row["collective_permute_count"], row["collective_permute_bytes"]) == (1, 4 * 2)  # bf16
    assert (row["all_to_all_count"], row["all_to_all_bytes"]) == (0, 0)
    assert row["collectives"] == 4  # %unused's all-reduce is not called from the entry
    assert row["collective_bytes"] == sum(
        row[f"{k}_bytes"] for k in ("all_gather", "all_reduce", "reduce_scatter", "collective_permute")
    )


def test_a_long_tuple_type_is_one_instruction_for_the_kernel_count_too():
    # the all-reduce's tuple type holds `/*index=4*/`; the pattern used to skip such lines (6, and no all-reduce).
    # The entry's all-gather-start, -done, all-reduce, collective-permute, reduce (a while launches nothing itself);
    # the body's reduce-scatter; %add once (three callers); %unused not called
    assert hlo_counts(HLO) == {"xla_kernels": 7, "xla_fusions": 0}


ASYNC = """HloModule jit_async

%wrapped_all_gather (p: f32[2,16]) -> f32[8,16] {
  %p = f32[2,16]{1,0} parameter(0)
  ROOT %ag = f32[8,16]{1,0} all-gather(%p), channel_id=7, dimensions={0}
}

ENTRY %main (x: f32[8,16], y: f32[4]) -> f32[8,16] {
  %x = f32[8,16]{1,0} parameter(0)
  %y = f32[4]{0} parameter(1)
  %rs = (f32[8,16]{1,0}, f32[2,16]{1,0}) reduce-scatter-start(%x), channel_id=5, dimensions={0}, to_apply=%add
  %rsd = f32[2,16]{1,0} reduce-scatter-done(%rs)
  %cps = (f32[4]{0}, f32[4]{0}, u32[], u32[]) collective-permute-start(%y), channel_id=6, source_target_pairs={{0,1}}
  %cpd = f32[4]{0} collective-permute-done(%cps)
  %as = ((f32[2,16]{1,0}), f32[8,16]{1,0}) async-start(%rsd), calls=%wrapped_all_gather
  ROOT %ad = f32[8,16]{1,0} async-done(%as)
}
"""


def test_async_forms_count_their_results_and_a_wrapped_collective_is_found_through_calls():
    row = collective_counts(ASYNC)
    assert (row["reduce_scatter_count"], row["reduce_scatter_bytes"]) == (1, 2 * 16 * 4)  # the shard, not the operand
    assert (row["collective_permute_count"], row["collective_permute_bytes"]) == (1, 4 * 4)  # not the u32 contexts
    assert (row["all_gather_count"], row["all_gather_bytes"]) == (1, 8 * 16 * 4)  # inside async-start's calls=
    assert row["collectives"] == 3


def test_one_device_has_none_and_unreadable_text_has_no_columns():
    single = "ENTRY %main (x: f32[4]) -> f32[4] {\n  %x = f32[4]{0} parameter(0)\n  ROOT %n = f32[4]{0} negate(%x)\n}\n"
    row = collective_counts(single)
    assert row["collectives"] == 0 and row["collective_bytes"] == 0
    assert collective_counts("not HLO") == {} and hlo_counts("not HLO") == {}  # empty columns, as hlo_counts


def test_shard_map_matmul_is_a_shard_map_with_a_psum_over_the_model_axis():
    # one device here (a one-device mesh): the e2e test counts its all-reduce on two; this shows the all-reduce
    # is the hand-written psum, not one XLA would add for a matmul sharded on its contraction
    import jax
    import numpy as np
    from jax.sharding import Mesh, NamedSharding
    from jax.sharding import PartitionSpec as P

    from jitexp.workloads.sharded import shard_map_matmul

    mesh = Mesh(np.array(jax.devices()[:1]), ("model",))
    x = jax.device_put(np.ones((4, 8), np.float32), NamedSharding(mesh, P(None, "model")))
    w = jax.device_put(np.ones((8, 2), np.float32), NamedSharding(mesh, P("model", None)))
    text = str(jax.make_jaxpr(jax.jit(shard_map_matmul))(x, w))
    assert "shard_map" in text and "psum" in text
    np.testing.assert_allclose(np.asarray(shard_map_matmul(x, w)), np.full((4, 2), 8.0))
    plain = str(jax.make_jaxpr(shard_map_matmul)(np.ones((4, 8), np.float32), np.ones((8, 2), np.float32)))
    assert "shard_map" not in plain  # no mesh: the plain matmul
