#!/bin/bash
#SBATCH --job-name=qm-l-42-cuda-smoke
#SBATCH --comment=qm:L-42
#SBATCH --partition=train
#SBATCH --account=vision
#SBATCH --gres=gpu:h100:1
#SBATCH --time=04:00:00
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=2
#SBATCH --mem=8G
#SBATCH --output=/projects/vision/.quartermaster/L-42/%x-%j.out
# Quartermaster lease L-42: template cuda-smoke v1 for alice@acme.example, team vision, class train.
set -euo pipefail

export QM_LEASE=L-42 QM_USER=alice@acme.example QM_TEAM=vision QM_TEMPLATE=cuda-smoke
export QM_IMAGE=ghcr.io/acme/quartermaster-base:cuda12.4-pytorch2.3-nccl2.21-py3.11
export QM_DATA=/projects/vision QM_JOB_DIR=/projects/vision/.quartermaster/L-42
export QM_NNODES=1 QM_GPUS_PER_NODE=1 QM_MASTER_PORT=29500
export QM_MASTER_ADDR="$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)"
mkdir -p "$QM_JOB_DIR"
cd "$QM_DATA"

# No container runtime is configured for this cluster: the workload runs on the nodes' own
# software stack, and QM_IMAGE records the image it was written for.
qm_container=()

read -r -d '' qm_run <<'QM_RUN' || true
set -euo pipefail
export QM_NODE_RANK="${SLURM_NODEID:-0}"
nvidia-smi -L
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv
exec python3 - 4096 <<'PY'
import sys, torch
n = int(sys.argv[1])
assert torch.cuda.is_available(), "CUDA is not available to PyTorch"
print(f"torch {torch.__version__}, CUDA {torch.version.cuda}, {torch.cuda.device_count()} GPU(s)")
a, b = torch.randn(n, n, dtype=torch.float64), torch.randn(n, n, dtype=torch.float64)
want = a @ b
for i in range(torch.cuda.device_count()):
    got = (a.cuda(i) @ b.cuda(i)).cpu()
    err = (got - want).abs().max().item()
    print(f"GPU {i} {torch.cuda.get_device_name(i)}: max error {err:.2e}")
    assert err < 1e-6, f"GPU {i} computed a wrong product"
print("all GPUs OK")
PY
QM_RUN

# srun does not inherit --cpus-per-task from the batch job: give the step the CPUs it asked for.
srun --ntasks-per-node=1 --cpus-per-task=2 --kill-on-bad-exit=1 "${qm_container[@]}" bash -c "$qm_run" &
qm_step=$!
qm_rc=0
wait "$qm_step" || qm_rc=$?
# A trapped signal ends the first wait early; wait for the workload itself to finish.
while kill -0 "$qm_step" 2>/dev/null; do wait "$qm_step" || qm_rc=$?; done
exit "$qm_rc"
