package main

import (
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// SPDX 2.3 JSON, the fields this SBOM uses.
type spdxDocument struct {
	SPDXVersion       string             `json:"spdxVersion"`
	DataLicense       string             `json:"dataLicense"`
	SPDXID            string             `json:"SPDXID"`
	Name              string             `json:"name"`
	DocumentNamespace string             `json:"documentNamespace"`
	CreationInfo      spdxCreationInfo   `json:"creationInfo"`
	Packages          []spdxPackage      `json:"packages"`
	Relationships     []spdxRelationship `json:"relationships"`
}

type spdxCreationInfo struct {
	Created  string   `json:"created"`
	Creators []string `json:"creators"`
}

type spdxPackage struct {
	SPDXID                string            `json:"SPDXID"`
	Name                  string            `json:"name"`
	VersionInfo           string            `json:"versionInfo,omitempty"`
	DownloadLocation      string            `json:"downloadLocation"`
	FilesAnalyzed         bool              `json:"filesAnalyzed"`
	PrimaryPackagePurpose string            `json:"primaryPackagePurpose,omitempty"`
	Checksums             []spdxChecksum    `json:"checksums,omitempty"`
	ExternalRefs          []spdxExternalRef `json:"externalRefs,omitempty"`
	Comment               string            `json:"comment,omitempty"`
}

type spdxChecksum struct {
	Algorithm     string `json:"algorithm"`
	ChecksumValue string `json:"checksumValue"`
}

type spdxExternalRef struct {
	ReferenceCategory string `json:"referenceCategory"`
	ReferenceType     string `json:"referenceType"`
	ReferenceLocator  string `json:"referenceLocator"`
}

type spdxRelationship struct {
	SPDXElementID      string `json:"spdxElementId"`
	RelationshipType   string `json:"relationshipType"`
	RelatedSPDXElement string `json:"relatedSpdxElement"`
}

var spdxIDUnsafe = regexp.MustCompile(`[^A-Za-z0-9.-]+`)

func spdxID(kind, s string) string {
	return "SPDXRef-" + kind + "-" + spdxIDUnsafe.ReplaceAllString(s, "-")
}

func purl(path, version string) string {
	return "pkg:golang/" + path + "@" + version
}

// spdxSBOM is the SBOM of image name for platform p: each binary (at binDir
// in the image, built at the host paths bins) as an APPLICATION package, each
// Go module it was linked from as a LIBRARY, the Go standard library, and the
// DEPENDS_ON relationships between them. It reads each binary's build
// information, as `go version -m` does.
func spdxSBOM(name string, o buildOptions, p v1.Platform, bins []string, binDir string) ([]byte, error) {
	doc := spdxDocument{
		SPDXVersion: "SPDX-2.3",
		DataLicense: "CC0-1.0",
		SPDXID:      "SPDXRef-DOCUMENT",
		Name:        name + " " + o.Version + " " + p.String(),
		CreationInfo: spdxCreationInfo{
			Created:  o.Created.UTC().Format(time.RFC3339),
			Creators: []string{"Organization: fleetpolicy", "Tool: fleetpolicy-imagebuild"},
		},
	}
	pkgs := map[string]spdxPackage{}
	sum := sha256.New()
	for _, bin := range bins {
		info, err := buildinfo.ReadFile(bin)
		if err != nil {
			return nil, fmt.Errorf("SBOM: reading the build information of %s: %w", bin, err)
		}
		inImage := path.Join(binDir, filepath.Base(bin))
		var settings []string
		for _, s := range info.Settings {
			switch s.Key {
			case "CGO_ENABLED", "GOOS", "GOARCH", "-trimpath", "vcs.revision", "vcs.time", "vcs.modified":
				settings = append(settings, s.Key+"="+s.Value)
			}
		}
		// The module of the main package: ours (version -version), or a
		// dependency of a tool module (kustomize: hack/tools/kustomize
		// requires sigs.k8s.io/kustomize/kustomize/v5 at its pin).
		mainPath, mainVersion := info.Main.Path, info.Main.Version
		for _, d := range info.Deps {
			if info.Path == d.Path || strings.HasPrefix(info.Path, d.Path+"/") {
				mainPath, mainVersion = d.Path, d.Version
			}
		}
		if mainVersion == "" || mainVersion == "(devel)" {
			mainVersion = o.Version
		}
		binID := spdxID("Binary", filepath.Base(bin))
		pkgs[binID] = spdxPackage{
			SPDXID:                binID,
			Name:                  inImage,
			VersionInfo:           mainVersion,
			DownloadLocation:      "NOASSERTION",
			PrimaryPackagePurpose: "APPLICATION",
			ExternalRefs:          []spdxExternalRef{{"PACKAGE-MANAGER", "purl", purl(mainPath, mainVersion)}},
			Comment:               "main package " + info.Path + " of module " + mainPath + ", built with " + info.GoVersion + " " + strings.Join(settings, " "),
		}
		doc.Relationships = append(doc.Relationships, spdxRelationship{"SPDXRef-DOCUMENT", "DESCRIBES", binID})
		std := spdxID("Package", "stdlib-"+info.GoVersion)
		pkgs[std] = spdxPackage{
			SPDXID: std, Name: "stdlib", VersionInfo: info.GoVersion, DownloadLocation: "https://go.dev/dl/",
			PrimaryPackagePurpose: "LIBRARY",
			ExternalRefs:          []spdxExternalRef{{"PACKAGE-MANAGER", "purl", purl("stdlib", info.GoVersion)}},
		}
		doc.Relationships = append(doc.Relationships, spdxRelationship{binID, "DEPENDS_ON", std})
		fmt.Fprintln(sum, info.Path, info.GoVersion)
		for _, d := range info.Deps {
			m := d
			comment := ""
			if d.Replace != nil {
				comment = "replaces " + d.Path + " " + d.Version
				m = d.Replace
			}
			id := spdxID("Package", m.Path+"-"+m.Version)
			pk := spdxPackage{
				SPDXID: id, Name: m.Path, VersionInfo: m.Version, DownloadLocation: "NOASSERTION",
				PrimaryPackagePurpose: "LIBRARY", Comment: comment,
				ExternalRefs: []spdxExternalRef{{"PACKAGE-MANAGER", "purl", purl(m.Path, m.Version)}},
			}
			if h, ok := strings.CutPrefix(m.Sum, "h1:"); ok {
				// The go.sum hash (SHA-256 of the module's file list), which SPDX
				// has no algorithm for: kept as a comment.
				pk.Comment = strings.TrimSpace(pk.Comment + " go.sum h1:" + h)
			}
			pkgs[id] = pk
			doc.Relationships = append(doc.Relationships, spdxRelationship{binID, "DEPENDS_ON", id})
			fmt.Fprintln(sum, m.Path, m.Version)
		}
	}
	ids := make([]string, 0, len(pkgs))
	for id := range pkgs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		doc.Packages = append(doc.Packages, pkgs[id])
	}
	sort.SliceStable(doc.Relationships, func(i, j int) bool {
		a, b := doc.Relationships[i], doc.Relationships[j]
		if a.SPDXElementID != b.SPDXElementID {
			return a.SPDXElementID < b.SPDXElementID
		}
		return a.RelatedSPDXElement < b.RelatedSPDXElement
	})
	doc.DocumentNamespace = fmt.Sprintf("https://fleetpolicy.io/spdx/%s/%s/%s-%s/%s",
		name, o.Version, p.OS, p.Architecture, hex.EncodeToString(sum.Sum(nil))[:16])
	return json.MarshalIndent(doc, "", "  ")
}
