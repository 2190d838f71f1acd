#!/bin/bash
#SBATCH --job-name=qm-l-42-jupyter-dataset
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
# Quartermaster lease L-42: template jupyter-dataset v1 for alice@acme.example, team vision, class interactive.
set -euo pipefail

export QM_LEASE=L-42 QM_USER=alice@acme.example QM_TEAM=vision QM_TEMPLATE=jupyter-dataset
export QM_IMAGE=registry.acme.example/vision/coco-tools:3
export QM_DATA=/projects/vision QM_JOB_DIR=/projects/vision/.quartermaster/L-42
export QM_NNODES=1 QM_GPUS_PER_NODE=1 QM_MASTER_PORT=29500
export QM_MASTER_ADDR="$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)"
export QM_PORT=27090
export QM_TOKEN="$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')"
export QM_DATASET=/dataset
mkdir -p "$QM_JOB_DIR"
cd "$QM_DATA"

# Each node runs the workload in the image through Apptainer.
qm_container=(apptainer exec --nv --bind "$QM_DATA" --bind /projects/vision/datasets/coco:/dataset:ro "docker://$QM_IMAGE")

read -r -d '' qm_run <<'QM_RUN' || true
set -euo pipefail
export QM_NODE_RANK="${SLURM_NODEID:-0}"
echo "dataset: $QM_DATASET"
mkdir -p notebooks
exec jupyter lab --no-browser --ip=0.0.0.0 --port="$QM_PORT" \
  --ServerApp.token="$QM_TOKEN" --ServerApp.root_dir=notebooks \
  --ServerApp.allow_remote_access=True
QM_RUN

# srun does not inherit --cpus-per-task from the batch job: give the step the CPUs it asked for.
srun --ntasks-per-node=1 --cpus-per-task=8 --kill-on-bad-exit=1 "${qm_container[@]}" bash -c "$qm_run" &
qm_step=$!
qm_rc=0
wait "$qm_step" || qm_rc=$?
# A trapped signal ends the first wait early; wait for the workload itself to finish.
while kill -0 "$qm_step" 2>/dev/null; do wait "$qm_step" || qm_rc=$?; done
exit "$qm_rc"
