package templates

import (
	"crypto/aes"
	"fmt"
	"io"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	// DisableRotationAnnotation on the key Secret, when "true", leaves its
	// rotation to an administrator (OCM's policy.open-cluster-management.io/
	// disable-rotation).
	DisableRotationAnnotation = "policy.open-cluster-management.io/disable-rotation"
	// BackupLabel marks the key Secret for OCM's disaster-recovery backup.
	BackupLabel      = "cluster.open-cluster-management.io/backup"
	backupLabelValue = "policy"
	// DefaultKeyRotation is how often a cluster's key is rotated (OCM's
	// default of 30 days).
	DefaultKeyRotation = 30 * 24 * time.Hour
)

// NewKey reads a new AES-256 key from random.
func NewKey(random io.Reader) ([]byte, error) {
	if random == nil {
		return nil, fmt.Errorf("no source of randomness for an encryption key")
	}
	key := make([]byte, KeySize)
	if _, err := io.ReadFull(random, key); err != nil {
		return nil, fmt.Errorf("making an AES-256 key: %w", err)
	}
	return key, nil
}

// NewKeySecret is the key Secret of cluster with a new key from random, last
// rotated now.
func NewKeySecret(cluster string, now time.Time, random io.Reader) (*corev1.Secret, error) {
	key, err := NewKey(random)
	if err != nil {
		return nil, err
	}
	return &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{
			Name: EncryptionKeySecret, Namespace: cluster,
			Labels:      map[string]string{BackupLabel: backupLabelValue},
			Annotations: map[string]string{LastRotatedAnnotation: now.UTC().Format(time.RFC3339)},
		},
		Data: map[string][]byte{KeyData: key},
	}, nil
}

// Key returns the key of a key Secret, or an error naming what is wrong.
func Key(secret *corev1.Secret) ([]byte, error) {
	key := secret.Data[KeyData]
	if len(key) != KeySize {
		return nil, fmt.Errorf("Secret %s/%s holds a %d-byte key, not %d", secret.Namespace, secret.Name, len(key), KeySize)
	}
	return key, nil
}

// KeyRotation is what to do with a key Secret at a given time.
type KeyRotation struct {
	// Rotate: the key moves to previousKey and a new key replaces it (its
	// rotation is due, its last-rotated annotation is missing or unreadable,
	// or the key is not a valid AES key — then it is not kept as previousKey).
	Rotate bool
	// DropPreviousKey: previousKey is not a valid AES key and is removed
	// (spokes would fail to decrypt with it).
	DropPreviousKey bool
	// TriggerUpdate: the hub templates of the roots whose replicas in the
	// cluster use encryption must be resolved again (after a rotation, and
	// whenever rotation is disabled, in case an administrator rotated it).
	TriggerUpdate bool
	// After is when to look at the Secret again (0: only on change).
	After time.Duration
}

// PlanKeyRotation decides, as OCM's encryptionkeys controller does, what to do
// with secret at now when keys are rotated every period.
func PlanKeyRotation(secret *corev1.Secret, now time.Time, period time.Duration) KeyRotation {
	if strings.EqualFold(secret.Annotations[DisableRotationAnnotation], "true") {
		return KeyRotation{TriggerUpdate: true}
	}
	if _, err := aes.NewCipher(secret.Data[KeyData]); err != nil {
		return KeyRotation{Rotate: true, TriggerUpdate: true, After: period}
	}
	last, err := time.Parse(time.RFC3339, secret.Annotations[LastRotatedAnnotation])
	if err != nil {
		return KeyRotation{Rotate: true, TriggerUpdate: true, After: period}
	}
	next := last.Add(period).Sub(now)
	if next <= 0 {
		return KeyRotation{Rotate: true, TriggerUpdate: true, After: period}
	}
	plan := KeyRotation{After: next}
	if prev, ok := secret.Data[PreviousKeyData]; ok && len(prev) > 0 {
		if _, err := aes.NewCipher(prev); err != nil {
			plan.DropPreviousKey = true
		}
	}
	return plan
}

// ApplyKeyRotation changes secret as plan says: a rotation keeps the current
// key as previousKey when it is a valid AES key, sets a new key from random
// and the last-rotated annotation to now.
func ApplyKeyRotation(secret *corev1.Secret, plan KeyRotation, now time.Time, random io.Reader) error {
	if secret.Data == nil {
		secret.Data = map[string][]byte{}
	}
	if plan.DropPreviousKey {
		delete(secret.Data, PreviousKeyData)
	}
	if !plan.Rotate {
		return nil
	}
	key, err := NewKey(random)
	if err != nil {
		return err
	}
	if _, err := aes.NewCipher(secret.Data[KeyData]); err == nil {
		secret.Data[PreviousKeyData] = secret.Data[KeyData]
	} else {
		delete(secret.Data, PreviousKeyData)
	}
	secret.Data[KeyData] = key
	if secret.Annotations == nil {
		secret.Annotations = map[string]string{}
	}
	secret.Annotations[LastRotatedAnnotation] = now.UTC().Format(time.RFC3339)
	return nil
}

// TriggerUpdateValue is the trigger-update annotation value that makes the
// roots using cluster's key resolve their hub templates again after the key
// Secret changed: unique per rotation.
func TriggerUpdateValue(secret *corev1.Secret) string {
	return fmt.Sprintf("rotate-key-%s-%s", secret.Namespace, secret.Annotations[LastRotatedAnnotation])
}
