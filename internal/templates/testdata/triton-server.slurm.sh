#!/bin/bash
#SBATCH --job-name=qm-l-42-triton-server
#SBATCH --comment=qm:L-42
#SBATCH --partition=interactive
#SBATCH --account=vision
#SBATCH --gres=gpu:l40s:1
#SBATCH --time=04:00:00
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=8
#SBATCH --mem=32G
#SBATCH --output=/projects/vision/.quartermaster/L-42/%x-%j.out
# Quartermaster lease L-42: template triton-server v1 for alice@acme.example, team vision, class interactive.
set -euo pipefail

export QM_LEASE=L-42 QM_USER=alice@acme.example QM_TEAM=vision QM_TEMPLATE=triton-server
export QM_IMAGE=nvcr.io/nvidia/tritonserver:24.05-py3
export QM_DATA=/projects/vision QM_JOB_DIR=/projects/vision/.quartermaster/L-42
export QM_NNODES=1 QM_GPUS_PER_NODE=1 QM_MASTER_PORT=29500
export QM_MASTER_ADDR="$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)"
export QM_PORT=27090
mkdir -p "$QM_JOB_DIR"
cd "$QM_DATA"

# No container runtime is configured for this cluster: the workload runs on the nodes' own
# software stack, and QM_IMAGE records the image it was written for.
qm_container=()

read -r -d '' qm_run <<'QM_RUN' || true
set -euo pipefail
export QM_NODE_RANK="${SLURM_NODEID:-0}"
exec tritonserver --model-repository="$QM_DATA/"models \
  --http-port="$QM_PORT" --grpc-port="$((QM_PORT + 1))" --metrics-port="$((QM_PORT + 2))" \
  --strict-model-config=true
QM_RUN

# srun does not inherit --cpus-per-task from the batch job: give the step the CPUs it asked for.
srun --ntasks-per-node=1 --cpus-per-task=8 --kill-on-bad-exit=1 "${qm_container[@]}" bash -c "$qm_run" &
qm_step=$!
qm_rc=0
wait "$qm_step" || qm_rc=$?
# A trapped signal ends the first wait early; wait for the workload itself to finish.
while kill -0 "$qm_step" 2>/dev/null; do wait "$qm_step" || qm_rc=$?; done
exit "$qm_rc"
