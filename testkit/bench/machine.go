package bench

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Machine is where the figures come from.
type Machine struct {
	Cores      int
	CPU        string
	MemoryMB   int64
	Go         string
	OS         string
	PostgreSQL string
	// Server says which PostgreSQL server: a throwaway cluster or DATABASE_URL's.
	Server string
	Date   time.Time
}

func machine(pgVersion string) Machine {
	m := Machine{
		Cores:      runtime.NumCPU(),
		CPU:        "unknown",
		Go:         runtime.Version(),
		OS:         runtime.GOOS + "/" + runtime.GOARCH,
		PostgreSQL: pgVersion,
		Date:       time.Now().UTC(),
	}
	if v := procField("/proc/cpuinfo", "model name"); v != "" {
		m.CPU = v
	}
	if v := procField("/proc/meminfo", "MemTotal"); v != "" {
		kb, _ := strconv.ParseInt(strings.TrimSuffix(v, " kB"), 10, 64)
		m.MemoryMB = kb / 1024
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.OS += " (Linux " + strings.TrimSpace(string(b)) + ")"
	}
	return m
}

// procField is the value of the first "key: value" line of a /proc file.
func procField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
