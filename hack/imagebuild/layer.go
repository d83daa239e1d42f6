package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// entry is a file or directory of a layer: its content is Data, or the file
// at Src on this machine.
type entry struct {
	Path     string
	Dir      bool
	Mode     int64
	UID, GID int
	Data     []byte
	Src      string
}

// newLayer is a gzipped OCI layer of files, reproducible: entries sorted by
// path, missing parent directories added (0755, root), every time mtime,
// no user or group names.
func newLayer(files []entry, mtime time.Time) (v1.Layer, error) {
	byPath := map[string]entry{}
	for _, f := range files {
		p := strings.TrimPrefix(path.Clean("/"+f.Path), "/")
		if p == "" {
			continue
		}
		f.Path = p
		byPath[p] = f
		for d := path.Dir(p); d != "." && d != "/"; d = path.Dir(d) {
			if _, ok := byPath[d]; !ok {
				byPath[d] = entry{Path: d, Dir: true, Mode: 0o755}
			}
		}
	}
	paths := make([]string, 0, len(byPath))
	for p := range byPath {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, p := range paths {
		f := byPath[p]
		hdr := &tar.Header{Name: p, Mode: f.Mode, Uid: f.UID, Gid: f.GID, ModTime: mtime, Format: tar.FormatPAX}
		if f.Dir {
			hdr.Typeflag, hdr.Name = tar.TypeDir, p+"/"
			if err := tw.WriteHeader(hdr); err != nil {
				return nil, err
			}
			continue
		}
		data := f.Data
		if f.Src != "" {
			var err error
			if data, err = os.ReadFile(f.Src); err != nil {
				return nil, fmt.Errorf("layer file /%s: %w", p, err)
			}
		}
		hdr.Typeflag, hdr.Size = tar.TypeReg, int64(len(data))
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(b)), nil
	}, tarball.WithMediaType(types.OCILayer))
}
