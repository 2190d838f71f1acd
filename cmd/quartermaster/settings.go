package main

import (
	"flag"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"
)

// startSetting is how an operator gave a value: with a flag when it was passed, else with its
// environment variable, so that a refusal names what they wrote and an example in the same form.
type startSetting struct {
	flag, env string
	fromFlag  bool
}

// settingOf says whether fs's flag name was passed on the command line.
func settingOf(fs *flag.FlagSet, name, env string) startSetting {
	s := startSetting{flag: "--" + name, env: env}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			s.fromFlag = true
		}
	})
	return s
}

// quoted is the value as written: --http "8080" or QM_HTTP_ADDR="8080".
func (s startSetting) quoted(v string) string {
	if s.fromFlag {
		return fmt.Sprintf("%s %q", s.flag, v)
	}
	return fmt.Sprintf("%s=%q", s.env, v)
}

// example is a value that works, in the same form: --http :8080 or QM_HTTP_ADDR=:8080.
func (s startSetting) example(v string) string {
	if s.fromFlag {
		return s.flag + " " + v
	}
	return s.env + "=" + v
}

// checkListenAddr refuses an address net.Listen cannot take (no port, a port out of range),
// before the database is opened.
func checkListenAddr(s startSetting, addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err == nil {
		_, err = net.LookupPort("tcp", port)
	}
	if err != nil {
		return errUsage{fmt.Sprintf("%s is not an address to listen on; write HOST:PORT, or :PORT for every interface, e.g. %s", s.quoted(addr), s.example(defaultHTTPAddr))}
	}
	return nil
}

// backendChoices are the backends this binary runs, in the order the docs name them.
func backendChoices() []string {
	names := []string{"sim"}
	for _, n := range []string{"slurm", "kubernetes"} {
		if _, ok := backends[n]; ok {
			names = append(names, n)
		}
	}
	return names
}

// checkBackend refuses a --backend or QM_BACKEND naming no backend; empty is the policy's.
func checkBackend(s startSetting, v string) error {
	if v == "" || v == "sim" {
		return nil
	}
	if _, ok := backends[v]; ok {
		return nil
	}
	names := backendChoices()
	example := "sim"
	if w := strings.ToLower(strings.TrimSpace(v)); w != v {
		for _, n := range names {
			if n == w {
				example = n
			}
		}
	}
	list := strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
	return errUsage{fmt.Sprintf("%s is not a backend; use %s, e.g. %s", s.quoted(v), list, s.example(example))}
}

// positiveDuration reads v, the environment variable env, as a positive Go duration; unset is
// zero. example is the value the refusal offers (the default).
func positiveDuration(env, v, example string) (time.Duration, error) {
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, errUsage{fmt.Sprintf("%s=%q is not a positive duration; example: %s=%s", env, v, env, example)}
	}
	return d, nil
}

// checkHTTPURL refuses a base URL startSetting that is not an absolute http(s) URL.
func checkHTTPURL(env, v, example string) error {
	if v == "" {
		return nil
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s=%q is not an http(s) URL; example: %s=%s", env, v, env, example)
	}
	return nil
}
