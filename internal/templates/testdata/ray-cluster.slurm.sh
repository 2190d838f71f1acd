#!/bin/bash
#SBATCH --job-name=qm-l-42-ray-cluster
#SBATCH --comment=qm:L-42
#SBATCH --partition=train
#SBATCH --account=vision
#SBATCH --gres=gpu:h100:8
#SBATCH --time=04:00:00
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=64
#SBATCH --mem=512G
#SBATCH --output=/projects/vision/.quartermaster/L-42/%x-%j.out
# Quartermaster lease L-42: template ray-cluster v1 for alice@acme.example, team vision, class train.
set -euo pipefail

export QM_LEASE=L-42 QM_USER=alice@acme.example QM_TEAM=vision QM_TEMPLATE=ray-cluster
export QM_IMAGE=rayproject/ray:2.24.0-py311-gpu
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
cpus=$(nproc)
if [ "$QM_NODE_RANK" = 0 ]; then
  ray start --head --node-ip-address="$(hostname -i | cut -d' ' -f1)" --port="$QM_MASTER_PORT" \
    --num-gpus="$QM_GPUS_PER_NODE" --num-cpus="$cpus" --dashboard-host=0.0.0.0
  # Wait for the workers, then hand over to the driver.
  for _ in $(seq 120); do
    [ "$(ray list nodes --format=json 2>/dev/null | grep -c '"state": "ALIVE"' || true)" -ge "$QM_NNODES" ] && break
    sleep 5
  done
  rc=0
  python3 driver.py || rc=$?
  ray stop
  exit "$rc"
else
  exec ray start --address="$QM_MASTER_ADDR:$QM_MASTER_PORT" \
    --num-gpus="$QM_GPUS_PER_NODE" --num-cpus="$cpus" --block
fi
QM_RUN

# srun does not inherit --cpus-per-task from the batch job: give the step the CPUs it asked for.
srun --ntasks-per-node=1 --cpus-per-task=64 --kill-on-bad-exit=1 --wait=60 "${qm_container[@]}" bash -c "$qm_run" &
qm_step=$!
qm_rc=0
wait "$qm_step" || qm_rc=$?
# A trapped signal ends the first wait early; wait for the workload itself to finish.
while kill -0 "$qm_step" 2>/dev/null; do wait "$qm_step" || qm_rc=$?; done
exit "$qm_rc"
