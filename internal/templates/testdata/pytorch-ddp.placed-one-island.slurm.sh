#!/bin/bash
#SBATCH --job-name=qm-l-42-pytorch-ddp
#SBATCH --comment=qm:L-42
#SBATCH --partition=train
#SBATCH --account=vision
#SBATCH --gres=gpu:h100:4
#SBATCH --time=04:00:00
#SBATCH --nodes=1
#SBATCH --cpus-per-task=32
#SBATCH --mem=256G
#SBATCH --output=/projects/vision/.quartermaster/L-42/%x-%j.out
#SBATCH --nodelist=gpu03
#SBATCH --gres-flags=enforce-binding
# Quartermaster lease L-42: template pytorch-ddp v1 for alice@acme.example, team vision, class train.
set -euo pipefail

export QM_LEASE=L-42 QM_USER=alice@acme.example QM_TEAM=vision QM_TEMPLATE=pytorch-ddp
export QM_IMAGE=ghcr.io/acme/quartermaster-base:cuda12.4-pytorch2.3-nccl2.21-py3.11
export QM_DATA=/projects/vision QM_JOB_DIR=/projects/vision/.quartermaster/L-42
export QM_NNODES=1 QM_GPUS_PER_NODE=4 QM_MASTER_PORT=29500
export QM_MASTER_ADDR="$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)"
mkdir -p "$QM_JOB_DIR"
cd "$QM_DATA"

# No container runtime is configured for this cluster: the workload runs on the nodes' own
# software stack, and QM_IMAGE records the image it was written for.
qm_container=()

read -r -d '' qm_run <<'QM_RUN' || true
set -euo pipefail
export QM_NODE_RANK="${SLURM_NODEID:-0}"
exec torchrun \
  --nnodes="$QM_NNODES" --nproc-per-node="$QM_GPUS_PER_NODE" --node-rank="$QM_NODE_RANK" \
  --rdzv-id="$QM_LEASE" --rdzv-backend=c10d --rdzv-endpoint="$QM_MASTER_ADDR:$QM_MASTER_PORT" \
  train.py --epochs=10
QM_RUN

# srun does not inherit --cpus-per-task from the batch job: give the step the CPUs it asked for.
srun --ntasks-per-node=1 --cpus-per-task=32 --kill-on-bad-exit=1 "${qm_container[@]}" bash -c "$qm_run" &
qm_step=$!
qm_rc=0
wait "$qm_step" || qm_rc=$?
# A trapped signal ends the first wait early; wait for the workload itself to finish.
while kill -0 "$qm_step" 2>/dev/null; do wait "$qm_step" || qm_rc=$?; done
exit "$qm_rc"
