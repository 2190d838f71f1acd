package agent

import (
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Script is what the fake GPUs of --fake show: per GPU its utilization, memory in use, processes,
// and optionally power, temperature and an XID error. GPUs no line names are idle.
//
// The text form has one line per GPU, range of GPUs, or "*" for every GPU no line names by number;
// a later line about a GPU overrides an earlier one; "#" starts a comment; lines are separated by
// newlines or ";":
//
//	# GPU  UTIL%  [mem=MiB] [pids=PID,PID] [power=W] [temp=C] [xid=N] [mig=PROFILE,PROFILE]
//	0      85     mem=20480 pids=4242
//	1-3    0      mem=1024
//	4      40     mig=3g.20gb,2g.10gb,1g.5gb pids=4243,4244
//	*      5
type Script struct {
	GPUs map[int]FakeGPU
	All  *FakeGPU // "*": every GPU no line names by number
}

// FakeGPU is one fake GPU's scripted state.
type FakeGPU struct {
	Util   float64
	MemMiB uint64   // memory in use; with processes and no mem=, 1 GiB per process
	PIDs   []uint32 // compute processes
	PowerW float64  // 0: derived from the utilization
	TempC  float64  // 0: derived from the utilization
	XID    uint64   // the last XID error (0: none)
	// MIG puts the GPU in MIG mode with one MIG instance (a GPU instance and its one compute
	// instance) per profile, like "3g.20gb"; the GPU's processes are spread over them in turn.
	MIG []string
}

// MIGSlices is how many of a GPU's 7 slices a MIG profile ("3g.20gb") takes, and its memory in
// GB; ok is false when profile is not such a name.
func MIGSlices(profile string) (slices, gb int, ok bool) {
	g, mem, found := strings.Cut(profile, "g.")
	if !found || !strings.HasSuffix(mem, "gb") {
		return 0, 0, false
	}
	slices, err1 := strconv.Atoi(g)
	gb, err2 := strconv.Atoi(strings.TrimSuffix(mem, "gb"))
	if err1 != nil || err2 != nil || slices < 1 || slices > 7 || gb < 1 || gb > 1024 {
		return 0, 0, false
	}
	return slices, gb, true
}

// For is the state of GPU i.
func (s Script) For(i int) FakeGPU {
	if g, ok := s.GPUs[i]; ok {
		return g
	}
	if s.All != nil {
		return *s.All
	}
	return FakeGPU{}
}

// Highest is the highest GPU number a line names; -1 when no line names one by number.
func (s Script) Highest() int {
	hi := -1
	for i := range s.GPUs {
		hi = max(hi, i)
	}
	return hi
}

// maxFakeGPUs bounds the GPU numbers a script may name.
const maxFakeGPUs = 64

// ParseScript reads a script's text form; the error says which line is wrong and how a good one
// looks.
func ParseScript(text string) (Script, error) {
	s := Script{GPUs: map[int]FakeGPU{}}
	lines := strings.FieldsFunc(text, func(r rune) bool { return r == '\n' || r == ';' })
	for n, line := range lines {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		bad := func(why string) (Script, error) {
			return Script{}, fmt.Errorf("fake GPU script line %d (%q): %s; a line looks like `0 85 mem=20480 pids=4242` (GPU 0 at 85%%, 20 GiB in use by process 4242) or `* 0`", n+1, strings.TrimSpace(line), why)
		}
		badMIG := func(why string) (Script, error) {
			return Script{}, fmt.Errorf("fake GPU script line %d (%q): %s; a GPU in MIG mode looks like `1 0 mig=3g.20gb,2g.10gb,1g.5gb` (GPU 1 with three MIG instances, at most 7 slices in all)", n+1, strings.TrimSpace(line), why)
		}
		if len(f) < 2 {
			return bad("it needs a GPU and a utilization")
		}
		util, err := strconv.ParseFloat(strings.TrimSuffix(f[1], "%"), 64)
		if err != nil || util < 0 || util > 100 {
			return bad(fmt.Sprintf("%q is not a utilization between 0 and 100", f[1]))
		}
		g := FakeGPU{Util: util}
		for _, kv := range f[2:] {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return bad(fmt.Sprintf("%q is not key=value", kv))
			}
			num := func(max uint64) (uint64, bool) {
				x, err := strconv.ParseUint(v, 10, 64)
				return x, err == nil && x <= max
			}
			var okv bool
			switch k {
			case "mem":
				g.MemMiB, okv = num(1 << 24)
			case "power":
				var x uint64
				x, okv = num(10000)
				g.PowerW = float64(x)
			case "temp":
				var x uint64
				x, okv = num(200)
				g.TempC = float64(x)
			case "xid":
				g.XID, okv = num(1 << 32)
			case "mig":
				okv = true
				total := 0
				for _, p := range strings.Split(v, ",") {
					n, _, ok := MIGSlices(p)
					if !ok {
						return badMIG(fmt.Sprintf("%q is not a MIG profile like 3g.20gb", p))
					}
					total += n
					g.MIG = append(g.MIG, p)
				}
				if total > 7 {
					return badMIG(fmt.Sprintf("%q takes %d slices, but a GPU has 7", v, total))
				}
			case "pids":
				okv = true
				for _, p := range strings.Split(v, ",") {
					pid, err := strconv.ParseUint(p, 10, 32)
					if err != nil || pid == 0 {
						okv = false
						break
					}
					g.PIDs = append(g.PIDs, uint32(pid))
				}
			default:
				return bad(fmt.Sprintf("unknown key %q (mem, pids, power, temp, xid, mig)", k))
			}
			if !okv {
				return bad(fmt.Sprintf("%q has a bad value", kv))
			}
		}
		if f[0] == "*" {
			all := g
			s.All = &all
			continue
		}
		lo, hi, isRange := strings.Cut(f[0], "-")
		a, err1 := strconv.Atoi(lo)
		b := a
		var err2 error
		if isRange {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || a < 0 || b < a || b >= maxFakeGPUs {
			return bad(fmt.Sprintf("%q is not a GPU number, a range like 1-3, or *", f[0]))
		}
		for i := a; i <= b; i++ {
			s.GPUs[i] = g
		}
	}
	return s, nil
}

// ScriptSource gives the script in force now.
type ScriptSource interface {
	Script() Script
}

// StaticScript is a script that never changes.
type StaticScript Script

// Script returns s.
func (s StaticScript) Script() Script { return Script(s) }

// ScriptFile is a script read from a file and read again whenever the file changes, so a demo or
// a test can change the fake GPUs while the agent runs. A file that does not parse keeps the last
// good script in force and is logged.
type ScriptFile struct {
	Path   string
	Logger *slog.Logger
	// GPUs, if set, is how many GPUs the machine has: a script naming another is not taken.
	GPUs int
	// Check, if set, says why a script does not fit the machine (a MIG profile its GPUs do not
	// have): such a script is not taken either.
	Check func(Script) error

	mu   sync.Mutex
	mod  time.Time
	size int64
	last Script
}

// Script reads the file if it changed.
func (f *ScriptFile) Script() Script {
	f.mu.Lock()
	defer f.mu.Unlock()
	st, err := os.Stat(f.Path)
	if err != nil || (st.ModTime().Equal(f.mod) && st.Size() == f.size) {
		return f.last
	}
	b, err := os.ReadFile(f.Path)
	if err != nil {
		return f.last
	}
	f.mod, f.size = st.ModTime(), st.Size()
	s, err := ParseScript(string(b))
	if err == nil && f.GPUs > 0 && s.Highest() >= f.GPUs {
		err = fmt.Errorf("it names GPU %d, but the machine has %d GPUs (0-%d)", s.Highest(), f.GPUs, f.GPUs-1)
	}
	if err == nil && f.Check != nil {
		err = f.Check(s)
	}
	if err != nil {
		if f.Logger != nil {
			f.Logger.Warn("the fake GPU script does not parse or names a GPU or MIG profile the machine lacks; keeping the last one", "file", f.Path, "err", err)
		}
		return f.last
	}
	f.last = s
	return s
}
