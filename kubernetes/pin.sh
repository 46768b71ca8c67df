#!/usr/bin/env bash
# Pins the control plane to one Kubernetes release: writes go.mod (with a replace line for every
# staging module that k8s.io/kubernetes's own go.mod requires at v0.0.0, taken from that go.mod,
# never typed) and runs `go mod tidy`. Usage: kubernetes/pin.sh v1.37.2
set -euo pipefail
cd "$(dirname "$0")"
version=${1:?usage: pin.sh vMAJOR.MINOR.PATCH}
[[ $version =~ ^v1\.([0-9]+)\.([0-9]+)$ ]] || { echo "pin.sh: $version is not a Kubernetes release such as v1.37.2" >&2; exit 2; }
staging="v0.${BASH_REMATCH[1]}.${BASH_REMATCH[2]}"
gomod=$(go mod download -json "k8s.io/kubernetes@$version" | sed -n 's/^\t"GoMod": "\(.*\)",$/\1/p')
{
  echo "// The control plane of zerodrop's netns provider: upstream Kubernetes at one pinned release,"
  echo "// https://github.com/kubernetes/kubernetes/releases/tag/$version"
  echo "// Upstream does not support k8s.io/kubernetes as a library: its go.mod requires every staging"
  echo "// module at v0.0.0 and replaces it with a path inside its own repository. The replace block"
  echo "// points each at its published tag ($staging is the tag of Kubernetes $version). Written by"
  echo "// pin.sh from k8s.io/kubernetes's own go.mod; change the pin with pin.sh, not by hand."
  echo "module zerodrop.dev/kubernetes"
  echo
  echo "go $(sed -n 's/^go //p' "$gomod")"
  echo
  echo "require k8s.io/kubernetes $version"
  echo
  echo "replace ("
  awk -v v="$staging" '$2 == "v0.0.0" && $1 ~ /^k8s\.io\// {print "\t" $1 " => " $1 " " v}' "$gomod"
  echo ")"
} > go.mod
go mod tidy
