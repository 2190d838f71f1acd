#!/bin/bash
#SBATCH --job-name=qm-l-42-ssh-shell
#SBATCH --comment=qm:L-42
#SBATCH --partition=train
#SBATCH --account=vision
#SBATCH --gres=gpu:h100:8
#SBATCH --time=04:00:00
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=64
#SBATCH --mem=256G
#SBATCH --output=/projects/vision/.quartermaster/L-42/%x-%j.out
#SBATCH --nodelist=gpu07
#SBATCH --exclusive
# Quartermaster lease L-42: template ssh-shell v1 for alice@acme.example, team vision, class train.
set -euo pipefail

export QM_LEASE=L-42 QM_USER=alice@acme.example QM_TEAM=vision QM_TEMPLATE=ssh-shell
export QM_IMAGE=ghcr.io/acme/quartermaster-base:cuda12.4-pytorch2.3-nccl2.21-py3.11
export QM_DATA=/projects/vision QM_JOB_DIR=/projects/vision/.quartermaster/L-42
export QM_NNODES=1 QM_GPUS_PER_NODE=8 QM_MASTER_PORT=29500
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
mkdir -p "$QM_JOB_DIR/ssh"
[ -f "$QM_JOB_DIR/ssh/host_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -f "$QM_JOB_DIR/ssh/host_ed25519"
# sshd starts each session with a fresh environment. Each session starts through a script,
# written here, that first sets the job's own variables: its QM_* variables, SLURM_JOB_ID (and
# SLURM_CONF where set), so srun, scontrol and squeue work on the job, and the GPUs Slurm gave
# it (CUDA_VISIBLE_DEVICES and siblings), so a program started over SSH uses only those; then
# it runs what the session asked for, as sshd would. ForceCommand works with any OpenSSH.
qm_session="$QM_JOB_DIR/ssh/session-$QM_NODE_RANK.sh"
{
  for v in "${!QM_@}" SLURM_JOB_ID SLURM_CONF CUDA_VISIBLE_DEVICES GPU_DEVICE_ORDINAL ROCR_VISIBLE_DEVICES ZE_AFFINITY_MASK; do
    if [ -n "${!v+set}" ]; then printf 'export %s=%q\n' "$v" "${!v}"; fi
  done
  cat <<'QM_SESSION'
qm_shell=${SHELL:-/bin/bash}
if [ -z "${SSH_ORIGINAL_COMMAND+set}" ]; then exec -a "-${qm_shell##*/}" "$qm_shell"; fi
qm_command=$SSH_ORIGINAL_COMMAND
unset SSH_ORIGINAL_COMMAND
case $qm_command in
internal-sftp*) # a subsystem sshd runs itself: run the program instead
  for p in /usr/lib/openssh/sftp-server /usr/libexec/openssh/sftp-server /usr/lib/ssh/sftp-server /usr/libexec/sftp-server; do
    if [ -x "$p" ]; then exec "$p" ${qm_command#internal-sftp}; fi
  done ;;
esac
exec -a "${qm_shell##*/}" "$qm_shell" -c "$qm_command"
QM_SESSION
} > "$qm_session"
# The path holds no quote: storage paths and lease ids are letters, digits and . _ - + /.
exec /usr/sbin/sshd -D -e -p "$QM_PORT" -h "$QM_JOB_DIR/ssh/host_ed25519" \
  -o "AuthorizedKeysFile=$QM_DATA/".ssh/authorized_keys -o PasswordAuthentication=no \
  -o KbdInteractiveAuthentication=no -o StrictModes=no -o "PidFile=$QM_JOB_DIR/ssh/sshd.pid" \
  -o "ForceCommand=exec /bin/bash '$qm_session'"
QM_RUN

# srun does not inherit --cpus-per-task from the batch job: give the step the CPUs it asked for.
srun --ntasks-per-node=1 --cpus-per-task=64 --kill-on-bad-exit=1 "${qm_container[@]}" bash -c "$qm_run" &
qm_step=$!
qm_rc=0
wait "$qm_step" || qm_rc=$?
# A trapped signal ends the first wait early; wait for the workload itself to finish.
while kill -0 "$qm_step" 2>/dev/null; do wait "$qm_step" || qm_rc=$?; done
exit "$qm_rc"
