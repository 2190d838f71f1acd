package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// sqliteNotWritable says why this process's user may not open the SQLite file (or write the
// directory SQLite keeps its -wal and -shm files in), naming whose it is and the chown that gives
// it to this user; nil where that is not the trouble. A file restored as root (`install -m 0600`)
// beside a service that runs as its own user is the usual case.
func sqliteNotWritable(file string) error {
	abs, err := filepath.Abs(file)
	if err != nil {
		abs = file
	}
	me, group := processUser()
	f, err := os.OpenFile(abs, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("store: the SQLite file %s belongs to %s (mode %04o), and this process runs as %s, who may not read and write it; give it to the service's user, e.g. chown %s:%s %s",
			abs, owner(abs), mode(abs), me, me, group, abs)
	}
	if err != nil {
		return nil
	}
	_ = f.Close()
	for _, side := range []string{abs + "-wal", abs + "-shm"} {
		if f, err := os.OpenFile(side, os.O_RDWR, 0); err != nil {
			if errors.Is(err, fs.ErrPermission) {
				return fmt.Errorf("store: SQLite's file %s beside the database belongs to %s (mode %04o), and this process runs as %s, who may not read and write it; give it to the service's user, e.g. chown %s:%s %s",
					side, owner(side), mode(side), me, me, group, side)
			}
		} else {
			_ = f.Close()
		}
	}
	dir := filepath.Dir(abs)
	if probe, err := os.CreateTemp(dir, ".qm-write-check-*"); err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return fmt.Errorf("store: the directory %s of the SQLite file belongs to %s (mode %04o), and this process runs as %s, who may not write the -wal and -shm files SQLite keeps beside the database there; give it to the service's user, e.g. chown %s:%s %s",
				dir, owner(dir), mode(dir), me, me, group, dir)
		}
	} else {
		_ = probe.Close()
		_ = os.Remove(probe.Name())
	}
	return nil
}

// processUser is the name of this process's user and of its group, or their numbers where they
// have no name.
func processUser() (name, group string) {
	name, group = strconv.Itoa(os.Geteuid()), strconv.Itoa(os.Getegid())
	if u, err := user.LookupId(name); err == nil {
		name = u.Username
	}
	if g, err := user.LookupGroupId(group); err == nil {
		group = g.Name
	}
	return name, group
}

// owner is the name of the user owning path, or its number.
func owner(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return "another user"
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "another user"
	}
	id := strconv.FormatUint(uint64(st.Uid), 10)
	if u, err := user.LookupId(id); err == nil {
		return u.Username
	}
	return "uid " + id
}

// mode is path's permission bits.
func mode(path string) fs.FileMode {
	if fi, err := os.Stat(path); err == nil {
		return fi.Mode().Perm()
	}
	return 0
}
