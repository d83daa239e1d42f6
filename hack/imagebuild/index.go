package main

import (
	"bytes"
	"encoding/json"
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// platformIndex is an OCI image index of one image per platform, as docker
// buildx writes one: its descriptors carry mediaType, digest, size and
// platform, and no artifactType (go-containerregistry's mutate.AppendManifests
// sets artifactType to the config's media type, which marks an artifact, not
// an image, to readers that look at it).
type platformIndex struct {
	raw    []byte
	images map[v1.Hash]v1.Image
}

func newPlatformIndex(images []v1.Image, platforms []v1.Platform, annotations map[string]string) (*platformIndex, error) {
	m := v1.IndexManifest{SchemaVersion: 2, MediaType: types.OCIImageIndex, Annotations: annotations}
	pi := &platformIndex{images: map[v1.Hash]v1.Image{}}
	for i, img := range images {
		desc, err := descriptorOf(img, platforms[i])
		if err != nil {
			return nil, err
		}
		m.Manifests = append(m.Manifests, desc)
		pi.images[desc.Digest] = img
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	pi.raw = raw
	return pi, nil
}

func (pi *platformIndex) MediaType() (types.MediaType, error) { return types.OCIImageIndex, nil }
func (pi *platformIndex) RawManifest() ([]byte, error)        { return pi.raw, nil }
func (pi *platformIndex) Size() (int64, error)                { return int64(len(pi.raw)), nil }

func (pi *platformIndex) Digest() (v1.Hash, error) {
	h, _, err := v1.SHA256(bytes.NewReader(pi.raw))
	return h, err
}

func (pi *platformIndex) IndexManifest() (*v1.IndexManifest, error) {
	return v1.ParseIndexManifest(bytes.NewReader(pi.raw))
}

func (pi *platformIndex) Image(h v1.Hash) (v1.Image, error) {
	if img, ok := pi.images[h]; ok {
		return img, nil
	}
	return nil, fmt.Errorf("image %s is not in the index", h)
}

func (pi *platformIndex) ImageIndex(h v1.Hash) (v1.ImageIndex, error) {
	return nil, fmt.Errorf("index %s: the index holds images only", h)
}
