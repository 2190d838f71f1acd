package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// FormatCPUs writes CPU numbers as a list of ranges, like "0-15,32-47".
func FormatCPUs(cpus []int) string {
	if len(cpus) == 0 {
		return ""
	}
	s := append([]int(nil), cpus...)
	sort.Ints(s)
	var b strings.Builder
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] <= s[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		if s[j] == s[i] {
			b.WriteString(strconv.Itoa(s[i]))
		} else {
			fmt.Fprintf(&b, "%d-%d", s[i], s[j])
		}
		i = j + 1
	}
	return b.String()
}

// maxCPUList bounds the CPUs a list may name, so a typo like 0-99999999 is an error, not an
// allocation.
const maxCPUList = 1 << 16

// ParseCPUs reads a list like "0-15,32-47" (the kernel's cpulist format).
func ParseCPUs(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var out []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("%q is not a CPU list like 0-15,32-47", s)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("%q is not a CPU list like 0-15,32-47", s)
			}
		}
		if b >= maxCPUList || len(out)+(b-a) >= maxCPUList {
			return nil, fmt.Errorf("%q names more CPUs than a node has", s)
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	return out, nil
}

// CoreMap maps CPU numbers (as the kernel and NVML count them, one per hardware thread) to the core
// indexes Slurm uses in gres.conf's Cores=: cores numbered from 0, socket by socket, each core
// once whatever its threads.
type CoreMap struct {
	core map[int]int
	cpus int
}

// Cores lists the Slurm core indexes of the given CPUs, each once, ascending; and whether the CPUs
// cover every core of the node.
func (m CoreMap) Cores(cpus []int) (cores []int, all bool) {
	seen := map[int]bool{}
	for _, c := range cpus {
		if k, ok := m.core[c]; ok && !seen[k] {
			seen[k] = true
			cores = append(cores, k)
		}
	}
	sort.Ints(cores)
	distinct := map[int]bool{}
	for _, k := range m.core {
		distinct[k] = true
	}
	return cores, len(cores) == len(distinct)
}

// CPUs is how many CPUs the map knows.
func (m CoreMap) CPUs() int { return m.cpus }

// LayoutCores is the CoreMap of a node with the given sockets, cores per socket and threads per
// core, numbered as Linux numbers them on x86: first every core's first thread, socket by socket,
// then every core's second thread, and so on.
func LayoutCores(sockets, coresPerSocket, threads int) CoreMap {
	m := CoreMap{core: map[int]int{}}
	cores := sockets * coresPerSocket
	for t := range threads {
		for c := range cores {
			m.core[t*cores+c] = c
		}
	}
	m.cpus = cores * threads
	return m
}

// SysfsCores reads the node's CPU layout from sysfs under root (normally "/sys"):
// devices/system/cpu/cpuN/topology/{physical_package_id,core_id}. Cores are numbered as Slurm
// numbers them: ordered by socket, then by core id.
func SysfsCores(root string) (CoreMap, error) {
	dirs, err := filepath.Glob(filepath.Join(root, "devices", "system", "cpu", "cpu[0-9]*"))
	if err != nil || len(dirs) == 0 {
		return CoreMap{}, fmt.Errorf("no CPUs under %s/devices/system/cpu", root)
	}
	type key struct{ pkg, core int }
	of := map[int]key{}
	for _, d := range dirs {
		cpu, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(d), "cpu"))
		if err != nil {
			continue
		}
		pkg, err1 := readInt(filepath.Join(d, "topology", "physical_package_id"))
		core, err2 := readInt(filepath.Join(d, "topology", "core_id"))
		if err1 != nil || err2 != nil {
			continue // an offline CPU has no topology
		}
		of[cpu] = key{pkg, core}
	}
	if len(of) == 0 {
		return CoreMap{}, fmt.Errorf("no CPU topology under %s/devices/system/cpu", root)
	}
	var keys []key
	seen := map[key]bool{}
	for _, k := range of {
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].pkg != keys[j].pkg {
			return keys[i].pkg < keys[j].pkg
		}
		return keys[i].core < keys[j].core
	})
	index := map[key]int{}
	for i, k := range keys {
		index[k] = i
	}
	m := CoreMap{core: map[int]int{}, cpus: len(of)}
	for cpu, k := range of {
		m.core[cpu] = index[k]
	}
	return m, nil
}

func readInt(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}
