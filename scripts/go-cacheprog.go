// go-cacheprog — the Go build cache of crucible's standard image (scripts/build-image), as a
// GOCACHEPROG program (Go >= 1.24: cmd/go talks to it over stdin/stdout in JSON).
//
// Why: in a sandbox every build starts with an empty cache, and since Go 1.20 the standard
// library ships as source only, so each `go build` would compile it again (tens of CPU
// seconds; minutes with net/http for testify). And cmd/go's own disk cache takes flock(2)
// locks, which the sandbox's seccomp policy refuses, so every build ended with "failed to
// trim cache" and exit status 1. This program serves a read-only cache seeded when the
// image is built (the standard library and testify, compiled with the language table's Go
// settings) and keeps what a sandbox adds in its own scratch directory; it takes no locks.
//
// Directories: the seed, CRUCIBLE_GOCACHE_SEED_DIR (default /usr/lib/crucible/go-cache),
// is only read; new entries go to $GOCACHE/crucible-prog (else $TMPDIR). With
// CRUCIBLE_GOCACHE_SEED=1 (the image build) new entries go to the seed directory itself.
//
// Layout of a directory: a/<action id hex> holds "<output id hex> <size> <unix nanos>",
// o/<output id hex> the output's bytes.
package main

import (
	"bufio"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

type request struct {
	ID       int64
	Command  string
	ActionID []byte `json:",omitempty"`
	OutputID []byte `json:",omitempty"`
	ObjectID []byte `json:",omitempty"` // the name of OutputID before Go 1.24
	BodySize int64  `json:",omitempty"`
}

type response struct {
	ID            int64
	Err           string     `json:",omitempty"`
	KnownCommands []string   `json:",omitempty"`
	Miss          bool       `json:",omitempty"`
	OutputID      []byte     `json:",omitempty"`
	Size          int64      `json:",omitempty"`
	Time          *time.Time `json:",omitempty"`
	DiskPath      string     `json:",omitempty"`
}

type store struct {
	seed  string // read-only; "" when absent
	local string // writable
}

// lookup(dir, action) — the entry of action in dir, or ok false.
func lookup(dir string, action []byte) (out []byte, size int64, t time.Time, path string, ok bool) {
	if dir == "" {
		return
	}
	data, err := os.ReadFile(filepath.Join(dir, "a", hex.EncodeToString(action)))
	if err != nil {
		return
	}
	f := strings.Fields(string(data))
	if len(f) != 3 {
		return
	}
	out, err = hex.DecodeString(f[0])
	if err != nil {
		return
	}
	size, err1 := strconv.ParseInt(f[1], 10, 64)
	nanos, err2 := strconv.ParseInt(f[2], 10, 64)
	if err1 != nil || err2 != nil {
		return
	}
	path = filepath.Join(dir, "o", f[0])
	st, err := os.Stat(path)
	if err != nil || st.Size() != size {
		return
	}
	return out, size, time.Unix(0, nanos), path, true
}

func (s *store) get(req *request, res *response) {
	for _, dir := range []string{s.local, s.seed} {
		if out, size, t, path, ok := lookup(dir, req.ActionID); ok {
			res.OutputID, res.Size, res.Time, res.DiskPath = out, size, &t, path
			return
		}
	}
	res.Miss = true
}

// writeFile(path, data) — written whole under a temporary name, then renamed into place.
func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp" + strconv.Itoa(os.Getpid())
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func (s *store) put(req *request, body []byte, res *response) error {
	out := req.OutputID
	if len(out) == 0 {
		out = req.ObjectID
	}
	if int64(len(body)) != req.BodySize {
		return fmt.Errorf("put: body has %d bytes, %d announced", len(body), req.BodySize)
	}
	oh := hex.EncodeToString(out)
	path := filepath.Join(s.local, "o", oh)
	if st, err := os.Stat(path); err != nil || st.Size() != int64(len(body)) {
		if err := writeFile(path, body); err != nil {
			return err
		}
	}
	now := time.Now()
	entry := fmt.Sprintf("%s %d %d\n", oh, len(body), now.UnixNano())
	if err := writeFile(filepath.Join(s.local, "a", hex.EncodeToString(req.ActionID)), []byte(entry)); err != nil {
		return err
	}
	res.DiskPath = path
	return nil
}

func main() {
	s := &store{seed: os.Getenv("CRUCIBLE_GOCACHE_SEED_DIR")}
	if s.seed == "" {
		s.seed = "/usr/lib/crucible/go-cache"
	}
	if os.Getenv("CRUCIBLE_GOCACHE_SEED") == "1" {
		s.local, s.seed = s.seed, ""
	} else if gc := os.Getenv("GOCACHE"); gc != "" && gc != "off" {
		s.local = filepath.Join(gc, "crucible-prog")
	} else {
		s.local = filepath.Join(os.TempDir(), "go-cacheprog")
	}
	in := json.NewDecoder(bufio.NewReaderSize(os.Stdin, 1<<16))
	w := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(w)
	send := func(r *response) {
		if err := enc.Encode(r); err != nil {
			os.Exit(1)
		}
		w.Flush()
	}
	send(&response{KnownCommands: []string{"get", "put", "close"}})
	for {
		var req request
		if err := in.Decode(&req); err != nil {
			if err != io.EOF {
				fmt.Fprintf(os.Stderr, "go-cacheprog: %v\n", err)
				os.Exit(1)
			}
			return
		}
		res := &response{ID: req.ID}
		switch req.Command {
		case "get":
			s.get(&req, res)
		case "put":
			var body []byte
			if req.BodySize > 0 {
				var b64 string
				if err := in.Decode(&b64); err != nil {
					fmt.Fprintf(os.Stderr, "go-cacheprog: put body: %v\n", err)
					os.Exit(1)
				}
				var err error
				if body, err = base64.StdEncoding.DecodeString(b64); err != nil {
					res.Err = "put body: " + err.Error()
					break
				}
			}
			if err := s.put(&req, body, res); err != nil {
				res.Err = err.Error()
			}
		case "close":
			send(res)
			return
		default:
			res.Err = "unknown command " + strconv.Quote(req.Command)
		}
		send(res)
	}
}
