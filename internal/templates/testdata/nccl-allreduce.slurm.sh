#!/bin/bash
#SBATCH --job-name=qm-l-42-nccl-allreduce
#SBATCH --comment=qm:L-42
#SBATCH --partition=train
#SBATCH --account=vision
#SBATCH --gres=gpu:h100:8
#SBATCH --time=04:00:00
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=32
#SBATCH --mem=128G
#SBATCH --output=/projects/vision/.quartermaster/L-42/%x-%j.out
# Quartermaster lease L-42: template nccl-allreduce v1 for alice@acme.example, team vision, class train.
set -euo pipefail

export QM_LEASE=L-42 QM_USER=alice@acme.example QM_TEAM=vision QM_TEMPLATE=nccl-allreduce
export QM_IMAGE=ghcr.io/acme/quartermaster-base:cuda12.4-pytorch2.3-nccl2.21-py3.11
export QM_DATA=/projects/vision QM_JOB_DIR=/projects/vision/.quartermaster/L-42
export QM_NNODES=2 QM_GPUS_PER_NODE=8 QM_MASTER_PORT=29500
export QM_MASTER_ADDR="$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)"
mkdir -p "$QM_JOB_DIR"
cd "$QM_DATA"

# No container runtime is configured for this cluster: the workload runs on the nodes' own
# software stack, and QM_IMAGE records the image it was written for.
qm_container=()

read -r -d '' qm_run <<'QM_RUN' || true
set -euo pipefail
export QM_NODE_RANK="${SLURM_NODEID:-0}"
bench="$QM_JOB_DIR/allreduce_bench.py"
cat > "$bench.$QM_NODE_RANK" <<'PY'
import os, sys, time
import torch, torch.distributed as dist
max_mib, iters = int(sys.argv[1]), int(sys.argv[2])
dist.init_process_group("nccl")
rank, world = dist.get_rank(), dist.get_world_size()
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
if rank == 0:
    print(f"{'size':>12} {'time_us':>10} {'algbw_GBps':>11} {'busbw_GBps':>11}  ({world} GPUs)")
size = 1 << 20
while size <= max_mib << 20:
    x = torch.ones(size // 4, dtype=torch.float32, device="cuda")
    for _ in range(5):
        dist.all_reduce(x)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(iters):
        dist.all_reduce(x)
    torch.cuda.synchronize()
    dt = (time.perf_counter() - t0) / iters
    algbw = size / dt / 1e9
    if rank == 0:
        print(f"{size:>12} {dt * 1e6:>10.1f} {algbw:>11.2f} {algbw * 2 * (world - 1) / world:>11.2f}")
    size *= 2
dist.destroy_process_group()
PY
exec torchrun \
  --nnodes="$QM_NNODES" --nproc-per-node="$QM_GPUS_PER_NODE" --node-rank="$QM_NODE_RANK" \
  --rdzv-id="$QM_LEASE" --rdzv-backend=c10d --rdzv-endpoint="$QM_MASTER_ADDR:$QM_MASTER_PORT" \
  "$bench.$QM_NODE_RANK" 4096 20
QM_RUN

# srun does not inherit --cpus-per-task from the batch job: give the step the CPUs it asked for.
srun --ntasks-per-node=1 --cpus-per-task=32 --kill-on-bad-exit=1 "${qm_container[@]}" bash -c "$qm_run" &
qm_step=$!
qm_rc=0
wait "$qm_step" || qm_rc=$?
# A trapped signal ends the first wait early; wait for the workload itself to finish.
while kill -0 "$qm_step" 2>/dev/null; do wait "$qm_step" || qm_rc=$?; done
exit "$qm_rc"
