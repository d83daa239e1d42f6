package main

import (
	"archive/tar"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Annotations that name the image of an archive's index.json entry.
const (
	containerdImageName = "io.containerd.image.name"
	ociRefName          = "org.opencontainers.image.ref.name"
)

// dockerManifest is one entry of a docker-archive's manifest.json.
type dockerManifest struct {
	Config   string
	RepoTags []string
	Layers   []string
}

// writeArchive writes idx as an OCI image layout tarball at out, named ref in
// index.json, with a Docker manifest.json naming dockerImage (one of idx's
// images) as ref.
func writeArchive(out, ref string, idx v1.ImageIndex, dockerImage v1.Image) error {
	if _, err := name.NewTag(ref, name.StrictValidation); err != nil {
		return fmt.Errorf("image reference %q: %w", ref, err)
	}
	dir, err := os.MkdirTemp(filepath.Dir(out), "."+filepath.Base(out)+".layout-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	if err := p.AppendIndex(idx, layout.WithAnnotations(map[string]string{containerdImageName: ref, ociRefName: ref})); err != nil {
		return err
	}
	if dockerImage != nil {
		m, err := dockerImage.Manifest()
		if err != nil {
			return err
		}
		dm := dockerManifest{Config: blobPath(m.Config.Digest), RepoTags: []string{ref}}
		for _, l := range m.Layers {
			dm.Layers = append(dm.Layers, blobPath(l.Digest))
		}
		b, err := json.Marshal([]dockerManifest{dm})
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "manifest.json"), b, 0o644); err != nil {
			return err
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".tmp-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tarDir(tmp, dir); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), out)
}

func blobPath(h v1.Hash) string { return path.Join("blobs", h.Algorithm, h.Hex) }

// tarDir writes the files under dir to w, sorted, with fixed metadata.
func tarDir(w io.Writer, dir string) error {
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		paths = append(paths, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		return err
	}
	sort.Strings(paths)
	tw := tar.NewWriter(w)
	for _, rel := range paths {
		full := filepath.Join(dir, filepath.FromSlash(rel))
		info, err := os.Stat(full)
		if err != nil {
			return err
		}
		hdr := &tar.Header{Name: rel, Mode: 0o644, ModTime: time.Unix(0, 0), Format: tar.FormatUSTAR}
		if info.IsDir() {
			hdr.Typeflag, hdr.Name, hdr.Mode = tar.TypeDir, rel+"/", 0o755
			if err := tw.WriteHeader(hdr); err != nil {
				return err
			}
			continue
		}
		hdr.Typeflag, hdr.Size = tar.TypeReg, info.Size()
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		f, err := os.Open(full)
		if err != nil {
			return err
		}
		_, err = io.Copy(tw, f)
		f.Close()
		if err != nil {
			return err
		}
	}
	return tw.Close()
}

// readArchive unpacks the archive at path into a temporary directory and
// returns its image index (the one entry of index.json) and a cleanup.
func readArchive(archive string) (v1.ImageIndex, func(), error) {
	dir, err := os.MkdirTemp("", "imagebuild-push-")
	if err != nil {
		return nil, nil, err
	}
	cleanup := func() { os.RemoveAll(dir) }
	fail := func(err error) (v1.ImageIndex, func(), error) {
		cleanup()
		return nil, nil, fmt.Errorf("%s: %w", archive, err)
	}
	f, err := os.Open(archive)
	if err != nil {
		return fail(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fail(err)
		}
		clean := path.Clean(hdr.Name)
		if !fs.ValidPath(clean) {
			return fail(fmt.Errorf("unsafe path %q in the archive", hdr.Name))
		}
		target := filepath.Join(dir, filepath.FromSlash(clean))
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return fail(err)
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return fail(err)
			}
			out, err := os.Create(target)
			if err != nil {
				return fail(err)
			}
			_, err = io.Copy(out, tr)
			if cerr := out.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return fail(err)
			}
		}
	}
	p, err := layout.FromPath(dir)
	if err != nil {
		return fail(fmt.Errorf("not an OCI image layout: %w", err))
	}
	top, err := p.ImageIndex()
	if err != nil {
		return fail(err)
	}
	im, err := top.IndexManifest()
	if err != nil {
		return fail(err)
	}
	if len(im.Manifests) != 1 || !im.Manifests[0].MediaType.IsIndex() {
		return fail(fmt.Errorf("index.json has %d entries, want one image index", len(im.Manifests)))
	}
	idx, err := top.ImageIndex(im.Manifests[0].Digest)
	if err != nil {
		return fail(err)
	}
	return idx, cleanup, nil
}

// push pushes the image index of archive to registry/NAME:tag, NAME being the
// archive's file name without .tar.
func push(ctx context.Context, archive, registry, tag string) (string, v1.Hash, error) {
	imageName := strings.TrimSuffix(filepath.Base(archive), ".tar")
	ref, err := name.NewTag(strings.TrimSuffix(registry, "/")+"/"+imageName+":"+tag, name.StrictValidation)
	if err != nil {
		return "", v1.Hash{}, fmt.Errorf("push %s: %w", archive, err)
	}
	idx, cleanup, err := readArchive(archive)
	if err != nil {
		return "", v1.Hash{}, err
	}
	defer cleanup()
	if err := remote.WriteIndex(ref, idx, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
		return "", v1.Hash{}, fmt.Errorf("push %s to %s: %w", archive, ref, err)
	}
	d, err := idx.Digest()
	return ref.String(), d, err
}
