#!/usr/bin/env bash
# Pins a control plane to one Kubernetes release: writes a go.mod (with a replace line for every
# staging module that k8s.io/kubernetes's own go.mod requires at v0.0.0, taken from that go.mod,
# never typed) and runs `go mod tidy` on it.
#
# Usage: kubernetes/pin.sh vX.Y.Z [DIR]
#   kubernetes/pin.sh v1.37.2           the default control plane: kubernetes/go.mod
#   kubernetes/pin.sh v1.36.3 v1.36     another minor: kubernetes/v1.36/go.mod
# Every pin builds the one main.go in kubernetes/ (`go build -modfile=DIR/go.mod`), so an older
# minor differs from the default by its go.mod and go.sum alone.
set -euo pipefail
cd "$(dirname "$0")"
version=${1:?usage: pin.sh vX.Y.Z [DIR]}
dir=${2:-.}
[[ $version =~ ^v1\.([0-9]+)\.([0-9]+)$ ]] || { echo "pin.sh: $version is not a Kubernetes release such as v1.37.2" >&2; exit 2; }
staging="v0.${BASH_REMATCH[1]}.${BASH_REMATCH[2]}"
mkdir -p "$dir"
gomod=$(go mod download -json "k8s.io/kubernetes@$version" | sed -n 's/^\t"GoMod": "\(.*\)",$/\1/p')
{
  echo "// The control plane of zerodrop's netns provider: upstream Kubernetes at one pinned release,"
  echo "// https://github.com/kubernetes/kubernetes/releases/tag/$version"
  echo "// Upstream does not support k8s.io/kubernetes as a library: its go.mod requires every staging"
  echo "// module at v0.0.0 and replaces it with a path inside its own repository. The replace block"
  echo "// points each at its published tag ($staging is the tag of Kubernetes $version). Written by"
  echo "// kubernetes/pin.sh from k8s.io/kubernetes's own go.mod; change the pin with pin.sh, not by hand."
  echo "module zerodrop.dev/kubernetes"
  echo
  echo "go $(sed -n 's/^go //p' "$gomod")"
  echo
  echo "require k8s.io/kubernetes $version"
  echo
  echo "replace ("
  awk -v v="$staging" '$2 == "v0.0.0" && $1 ~ /^k8s\.io\// {print "\t" $1 " => " $1 " " v}' "$gomod"
  echo ")"
} > "$dir/go.mod"
if [ "$dir" = . ]; then
  go mod tidy
else
  # The main package is kubernetes/main.go: tidy it against this go.mod, from kubernetes/.
  [ -e "$dir/go.sum" ] || : > "$dir/go.sum"
  go mod tidy -modfile="$dir/go.mod"
fi
