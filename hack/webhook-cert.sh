#!/usr/bin/env bash
# Makes the hub webhook's serving certificate without cert-manager (README
# "Webhook certificate without cert-manager"): a CA and a certificate for the
# name the API server calls, fleetpolicy-hub-webhook.<namespace>.svc, signed by
# it, written into DIR as ca.crt, ca.key, tls.crt and tls.key, the files the
# overlay's secretGenerator reads. `make e2e` deploys the hub with them.
#
#   hack/webhook-cert.sh DIR [NAMESPACE (fleetpolicy-system)] [DAYS (365)]
#
# Keep ca.key out of the repository (and out of the cluster: the overlay does
# not read it); make a new certificate with it before DAYS have passed.
set -euo pipefail
dir=${1:?usage: hack/webhook-cert.sh DIR [NAMESPACE] [DAYS]}
ns=${2:-fleetpolicy-system}
days=${3:-365}
svc=fleetpolicy-hub-webhook.$ns.svc
command -v openssl >/dev/null || { echo "webhook-cert: openssl not found" >&2; exit 1; }
mkdir -p "$dir"
cd "$dir"
umask 077
openssl req -x509 -newkey rsa:2048 -nodes -days "$days" -subj /CN=fleetpolicy-webhook-ca \
	-keyout ca.key -out ca.crt 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj "/CN=$svc" -keyout tls.key -out tls.csr 2>/dev/null
printf 'subjectAltName=DNS:%s,DNS:%s.cluster.local\nextendedKeyUsage=serverAuth\n' "$svc" "$svc" >tls.ext
openssl x509 -req -in tls.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days "$days" \
	-extfile tls.ext -out tls.crt 2>/dev/null
rm -f tls.csr tls.ext ca.srl
echo "webhook-cert: $dir/tls.crt for $svc, signed by $dir/ca.crt, valid $days days"
