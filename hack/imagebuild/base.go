package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// localBaseName is org.opencontainers.image.base.name of the base made here.
const localBaseName = "fleetpolicy.io/local-base"

// user is an account of the image's /etc/passwd and /etc/group.
type user struct {
	Name string
	UID  int
	Home string
}

// baseSet gives the base image of each platform.
type baseSet struct {
	name string
	// local: the CA bundle; remote: the pulled images by platform.
	caBundle []byte
	o        buildOptions
	remote   map[string]v1.Image
}

func resolveBase(ctx context.Context, ref string, o buildOptions) (*baseSet, error) {
	if ref == "" {
		ca, err := os.ReadFile(o.CABundle)
		if err != nil {
			return nil, fmt.Errorf("the local base needs a CA bundle: %w (set -ca-bundle, or give a base image with -base)", err)
		}
		return &baseSet{name: localBaseName, caBundle: ca, o: o}, nil
	}
	d, err := name.NewDigest(ref)
	if err != nil {
		return nil, fmt.Errorf("base image %q: %w (a base must be pinned: REF@sha256:DIGEST)", ref, err)
	}
	desc, err := remote.Get(d, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain))
	if err != nil {
		return nil, fmt.Errorf("pulling base image %s: %w", ref, err)
	}
	bs := &baseSet{name: strings.SplitN(ref, "@", 2)[0], o: o, remote: map[string]v1.Image{}}
	if desc.MediaType.IsIndex() {
		idx, err := desc.ImageIndex()
		if err != nil {
			return nil, err
		}
		im, err := idx.IndexManifest()
		if err != nil {
			return nil, err
		}
		for _, m := range im.Manifests {
			if m.Platform == nil || !m.MediaType.IsImage() {
				continue
			}
			img, err := idx.Image(m.Digest)
			if err != nil {
				return nil, err
			}
			bs.remote[m.Platform.OS+"/"+m.Platform.Architecture] = img
		}
	} else {
		img, err := desc.Image()
		if err != nil {
			return nil, err
		}
		cf, err := img.ConfigFile()
		if err != nil {
			return nil, err
		}
		bs.remote[cf.OS+"/"+cf.Architecture] = img
	}
	for _, p := range o.Platforms {
		if _, ok := bs.remote[p.OS+"/"+p.Architecture]; !ok {
			return nil, fmt.Errorf("base image %s has no image for %s", ref, p)
		}
	}
	return bs, nil
}

// image is the base for platform p, for an image that runs as u, and its digest.
func (b *baseSet) image(p v1.Platform, u user) (v1.Image, v1.Hash, error) {
	if b.remote != nil {
		img := b.remote[p.OS+"/"+p.Architecture]
		d, err := img.Digest()
		return img, d, err
	}
	img, err := localBase(p, b.caBundle, u, b.o)
	if err != nil {
		return nil, v1.Hash{}, err
	}
	d, err := img.Digest()
	return img, d, err
}

// localBase is the base made here for platform p: one layer with the
// accounts (root, nobody, nonroot 65532, and u), the CA bundle, /tmp and the
// home directories. No shell, no libc.
func localBase(p v1.Platform, ca []byte, u user, o buildOptions) (v1.Image, error) {
	users := []user{{Name: "root", UID: 0, Home: "/root"}, nonroot, {Name: "nobody", UID: 65534, Home: "/nonexistent"}}
	if u != nonroot {
		users = append(users, u)
	}
	var passwd, group strings.Builder
	for _, x := range users {
		fmt.Fprintf(&passwd, "%s:x:%d:%d:%s:%s:/sbin/nologin\n", x.Name, x.UID, x.UID, x.Name, x.Home)
		fmt.Fprintf(&group, "%s:x:%d:\n", x.Name, x.UID)
	}
	files := []entry{
		{Path: "/etc", Dir: true, Mode: 0o755},
		{Path: "/etc/passwd", Mode: 0o644, Data: []byte(passwd.String())},
		{Path: "/etc/group", Mode: 0o644, Data: []byte(group.String())},
		{Path: "/etc/ssl", Dir: true, Mode: 0o755},
		{Path: "/etc/ssl/certs", Dir: true, Mode: 0o755},
		{Path: "/etc/ssl/certs/ca-certificates.crt", Mode: 0o644, Data: ca},
		{Path: "/tmp", Dir: true, Mode: 0o1777},
		{Path: "/home", Dir: true, Mode: 0o755},
		{Path: "/root", Dir: true, Mode: 0o700},
		{Path: nonroot.Home, Dir: true, Mode: 0o700, UID: nonroot.UID, GID: nonroot.UID},
	}
	if u != nonroot {
		files = append(files, entry{Path: u.Home, Dir: true, Mode: 0o755, UID: u.UID, GID: u.UID})
	}
	layer, err := newLayer(files, o.Created)
	if err != nil {
		return nil, err
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History:   v1.History{Created: v1.Time{Time: o.Created}, CreatedBy: "imagebuild local base", Comment: "accounts, CA bundle, /tmp"},
	})
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Variant = p.OS, p.Architecture, p.Variant
	cf.Created = v1.Time{Time: o.Created}
	cf.Config.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"}
	cf.Config.User = fmt.Sprintf("%d:%d", nonroot.UID, nonroot.UID)
	return mutate.ConfigFile(img, cf)
}
