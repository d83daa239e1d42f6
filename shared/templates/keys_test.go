package templates

import (
	"bytes"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestKeyRotation(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	valid := bytes.Repeat([]byte{1}, KeySize)
	newKey := bytes.Repeat([]byte{9}, KeySize)
	secret := func(lastRotated string, key, previous []byte, disable string) *corev1.Secret {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: EncryptionKeySecret, Namespace: "cluster-a",
			Annotations: map[string]string{}}, Data: map[string][]byte{"key": key}}
		if lastRotated != "" {
			s.Annotations[LastRotatedAnnotation] = lastRotated
		}
		if previous != nil {
			s.Data["previousKey"] = previous
		}
		if disable != "" {
			s.Annotations[DisableRotationAnnotation] = disable
		}
		return s
	}
	day := 24 * time.Hour
	for _, tc := range []struct {
		name         string
		secret       *corev1.Secret
		want         KeyRotation
		wantKey      []byte
		wantPrevious []byte
	}{
		{"not due: look again when due", secret(now.Add(-10*day).Format(time.RFC3339), valid, nil, ""),
			KeyRotation{After: 20 * day}, valid, nil},
		{"due: rotate, keep the old key as previousKey", secret(now.Add(-30*day).Format(time.RFC3339), valid, nil, ""),
			KeyRotation{Rotate: true, TriggerUpdate: true, After: 30 * day}, newKey, valid},
		{"no last-rotated annotation: rotate", secret("", valid, nil, ""),
			KeyRotation{Rotate: true, TriggerUpdate: true, After: 30 * day}, newKey, valid},
		{"unreadable last-rotated: rotate", secret("yesterday", valid, nil, ""),
			KeyRotation{Rotate: true, TriggerUpdate: true, After: 30 * day}, newKey, valid},
		{"an invalid key is rotated and not kept", secret(now.Format(time.RFC3339), []byte("bad"), valid, ""),
			KeyRotation{Rotate: true, TriggerUpdate: true, After: 30 * day}, newKey, nil},
		{"an invalid previousKey is dropped", secret(now.Add(-day).Format(time.RFC3339), valid, []byte("bad"), ""),
			KeyRotation{DropPreviousKey: true, After: 29 * day}, valid, nil},
		{"rotation disabled: never rotated, templates re-resolved", secret("", []byte("bad"), nil, "TRUE"),
			KeyRotation{TriggerUpdate: true}, []byte("bad"), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := PlanKeyRotation(tc.secret, now, DefaultKeyRotation)
			if got != tc.want {
				t.Fatalf("plan %+v, want %+v", got, tc.want)
			}
			s := tc.secret.DeepCopy()
			if err := ApplyKeyRotation(s, got, now, bytes.NewReader(newKey)); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(s.Data["key"], tc.wantKey) || !bytes.Equal(s.Data["previousKey"], tc.wantPrevious) {
				t.Errorf("key %v previousKey %v", s.Data["key"], s.Data["previousKey"])
			}
			if got.Rotate && s.Annotations[LastRotatedAnnotation] != "2026-03-01T12:00:00Z" {
				t.Errorf("last-rotated %q", s.Annotations[LastRotatedAnnotation])
			}
		})
	}
}

func TestNewKeySecret(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.FixedZone("x", 3600))
	s, err := NewKeySecret("cluster-a", now, bytes.NewReader(bytes.Repeat([]byte{3}, KeySize)))
	if err != nil {
		t.Fatal(err)
	}
	if s.Namespace != "cluster-a" || s.Name != EncryptionKeySecret || s.Labels[BackupLabel] != "policy" ||
		s.Annotations[LastRotatedAnnotation] != "2026-03-01T11:00:00Z" {
		t.Errorf("secret %+v", s.ObjectMeta)
	}
	if k, err := Key(s); err != nil || len(k) != KeySize {
		t.Errorf("key %v, %v", k, err)
	}
	if _, err := NewKeySecret("c", now, bytes.NewReader([]byte{1})); err == nil {
		t.Error("a short random read made a key")
	}
	if TriggerUpdateValue(s) != "rotate-key-cluster-a-2026-03-01T11:00:00Z" {
		t.Errorf("trigger value %q", TriggerUpdateValue(s))
	}
}
