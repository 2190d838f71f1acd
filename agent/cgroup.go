package agent

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Cgroups finds the Slurm job or Kubernetes pod of a process from its cgroup path, read from
// <ProcRoot>/<pid>/cgroup. Slurm's cgroup plugins put a job's processes under …/job_<id>/… (cgroup
// v1: /slurm/uid_1000/job_123/step_0; v2: /system.slice/slurmstepd.scope/job_123/step_0/…); the
// kubelet puts a pod's under …/pod<uid>/… (cgroupfs driver) or
// …/kubepods-burstable-pod<uid with underscores>.slice/… (systemd driver).
type Cgroups struct {
	// ProcRoot is where the processes are: "/proc", or a fixture tree in tests. The agent needs the
	// host's PID namespace (NVML reports host PIDs).
	ProcRoot string
}

// Owner is the job or pod of a process; both empty when it belongs to neither, or is gone.
func (c Cgroups) Owner(pid uint32) (job, pod string) {
	job, pod, _ = c.Read(pid)
	return job, pod
}

// Read is Owner, with the error when the process's cgroup could not be read: the process ended
// after NVML listed it, or the agent cannot see it (another PID namespace, a /proc mounted with
// hidepid, a wrong ProcRoot).
func (c Cgroups) Read(pid uint32) (job, pod string, err error) {
	b, err := os.ReadFile(filepath.Join(c.root(), strconv.FormatUint(uint64(pid), 10), "cgroup"))
	if err != nil {
		return "", "", err
	}
	job, pod = ParseCgroup(b)
	return job, pod, nil
}

func (c Cgroups) root() string {
	if c.ProcRoot == "" {
		return "/proc"
	}
	return c.ProcRoot
}

var (
	jobRe = regexp.MustCompile(`/job_([0-9]+)(?:/|$)`)
	podRe = regexp.MustCompile(`[/-]pod([0-9a-fA-F]{8}[-_][0-9a-fA-F]{4}[-_][0-9a-fA-F]{4}[-_][0-9a-fA-F]{4}[-_][0-9a-fA-F]{12})(?:\.slice)?(?:/|$)`)
)

// ParseCgroup reads a /proc/<pid>/cgroup file ("hierarchy:controllers:path" per line) and returns
// the first Slurm job id or pod UID any of its paths names.
func ParseCgroup(b []byte) (job, pod string) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), 64*1024)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		path := parts[2]
		if job == "" {
			if m := jobRe.FindStringSubmatch(path); m != nil {
				job = m[1]
			}
		}
		if pod == "" {
			if m := podRe.FindStringSubmatch(path); m != nil {
				pod = strings.ToLower(strings.ReplaceAll(m[1], "_", "-"))
			}
		}
	}
	return job, pod
}
