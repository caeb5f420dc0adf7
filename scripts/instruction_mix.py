#!/usr/bin/env python3
"""Instructions, floating-point arithmetic and memory operations of the step, stage by stage.

Runs an impulse command under callgrind (per-instruction counts, collected inside
World::integrate only), disassembles the binary with objdump, and sums per stage of the step:
executed instructions, floating-point arithmetic instructions (add, sub, mul, div, sqrt, min, max,
fused multiply-add; scalar or packed), the flops they perform (a packed instruction counts one a
lane: 2 on xmm, 4 on ymm, 8 on zmm registers; an FMA 2 a lane), instructions with a memory operand (loads and stores; not lea) and branches, each per
step. A function goes to a stage by its name (the table STAGES below; inlined code counts where it
was inlined), so the split is close, not exact.

    /usr/bin/python3 scripts/instruction_mix.py --steps 3000 -- run models/worlds/anymal_stand.xml
    /usr/bin/python3 scripts/instruction_mix.py --steps 3000 -- demo trot

(the command's own step count must be --steps; needs valgrind and binutils' objdump)
"""
from __future__ import annotations

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile

STAGES = [
    ("dynamics", r"compute_step_dynamics|compute_free_body_dynamics|Stepper::prepare|solve_L_vec|solve_LT_vec|crba|ltdl|"
                 r"body_pose|world_subspace|world_inertia|joint_pose|dynamics_stage|rnea|floating_root|recompute_step"),
    ("collision", r"Collision|fcl|narrow|sphere|box_|plane|manifold|clip|Shape|AABB|heightfield|convex"),
    ("delassus", r"DelassusAssembler|targets_stage|plan_position|contact_frame|point_jacobian|branch_last_dof|solve_LT_path|"
                 r"path_product|gather|island"),
    ("solve", r"Solver|Bisection|solve_prepared|bisection_|DelassusProduct|Anderson|cone|ActiveSet|SweepMonitor|"
              r"problem_is_finite|prepare_contact|bound_qp|contact_impulse"),
    ("integrate", r"integrate|Stepper::finish|report_|remember|warm_start|apply|quaternion|euler_position"),
]
FP = re.compile(r"v?(add|sub|mul|div|sqrt|min|max)(sd|pd)$|v?fn?m(add|sub)\d+(sd|pd)$")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--binary", default=os.path.join("build", "bin", "impulse"))
    p.add_argument("--steps", type=int, required=True, help="steps the command takes (the figures are per step)")
    p.add_argument("command", nargs=argparse.REMAINDER, help="-- then the impulse arguments")
    a = p.parse_args(argv)
    cmd = [c for c in a.command if c != "--"]
    if not cmd:
        p.error("no impulse arguments after --")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        subprocess.run(["valgrind", "--tool=callgrind", "--dump-instr=yes", "--compress-pos=no", "--compress-strings=no",
                        "--toggle-collect=*World::integrate*", f"--callgrind-out-file={out}", a.binary] + cmd,
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", a.binary], check=True, capture_output=True,
                             text=True).stdout
        opcode, memory, width = {}, set(), {}
        for line in dis.splitlines():
            m = re.match(r"\s+([0-9a-f]+):\s+(\S+)\s*(.*)", line)
            if m:
                addr = int(m.group(1), 16)
                opcode[addr] = m.group(2)
                width[addr] = 8 if "%zmm" in m.group(3) else 4 if "%ymm" in m.group(3) else 2
                if "(" in m.group(3) and not m.group(2).startswith(("lea", "nop")):
                    memory.add(addr)
        cost: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        fn, after_call = "", False
        with open(out) as f:
            for line in f:
                if line.startswith("fn="):
                    fn = line[3:].strip()
                elif line.startswith("calls="):
                    after_call = True  # (the next line is the call's inclusive cost)
                elif line.startswith("0x"):
                    if after_call:
                        after_call = False
                        continue
                    parts = line.split()
                    addr, ir = int(parts[0], 16), int(parts[2]) if len(parts) > 2 else 0
                    op = opcode.get(addr, "")
                    c = cost[fn]
                    c["ir"] += ir
                    if FP.match(op):
                        lanes = width.get(addr, 2) if op.endswith("pd") else 1
                        c["fp"] += ir
                        c["flop"] += ir * lanes * (2 if "fm" in op or "fnm" in op else 1)
                    if addr in memory:
                        c["mem"] += ir
                    if op.startswith(("j", "call", "ret")):
                        c["branch"] += ir
    stage_cost: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for name, c in cost.items():
        base = name.replace("(anonymous namespace)", "anon")
        # a kernel run through the ISA dispatch (core/isa_dispatch.hpp: run_v3<lambda of F>, run_baseline<...>)
        # counts as the function F whose lambda it runs
        dispatched = re.search(r"run_(?:v3|baseline)<(.*)", base)
        if dispatched:
            base = dispatched.group(1)
        base = base.removeprefix("void ").split("(")[0]
        stage = next((s for s, rx in STAGES if re.search(rx, base)), "other")
        stage_cost[stage].update(c)
    total = sum(c["ir"] for c in stage_cost.values())
    n = a.steps
    print(f"{'stage':<10} {'instructions':>12} {'share':>6} {'FP arith':>9} {'flops':>7} {'memory ops':>10} {'branches':>8}")
    for stage in [s for s, _ in STAGES] + ["other", "total"]:
        c = stage_cost[stage] if stage != "total" else sum(stage_cost.values(), collections.Counter())
        print(f"{stage:<10} {c['ir'] / n:12.0f} {100 * c['ir'] / max(total, 1):5.1f}% {c['fp'] / n:9.0f} "
              f"{c['flop'] / n:7.0f} {c['mem'] / n:10.0f} {c['branch'] / n:8.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
