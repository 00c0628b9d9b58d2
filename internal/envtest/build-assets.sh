#!/usr/bin/env bash
# Builds a real kube-apiserver and etcd from the Go module proxy into
# DEST (default .cache/kube/<kube version>), the two binaries controller-runtime's
# envtest needs (KUBEBUILDER_ASSETS=DEST). Skips a binary already built at its
# version.
#
# Neither project can be `go install`ed directly: k8s.io/kubernetes replaces its
# k8s.io/* staging modules with ./staging paths, and etcd's server module
# replaces its siblings with ../ paths; replace directives of a dependency are
# ignored, so each binary is built inside a throwaway wrapper module (in a
# temporary directory, removed afterwards) whose own go.mod pins those modules
# to their published versions.
#
# Usage: build-assets.sh [DEST]
# Environment: KUBE_VERSION (1.37.2), ETCD_VERSION (3.6.16).
set -euo pipefail

KUBE_VERSION=${KUBE_VERSION:-1.37.2}
ETCD_VERSION=${ETCD_VERSION:-3.6.16}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DEST=${1:-$ROOT/.cache/kube/$KUBE_VERSION}
export GOTOOLCHAIN=${GOTOOLCHAIN:-go1.27.3}
export CGO_ENABLED=0
export GOFLAGS=-mod=mod

# A stamp per binary names the version it was built at: changing a version
# rebuilds that binary.
stamp() { echo "$DEST/.$1-$2"; }
if [[ -x $DEST/kube-apiserver && -e $(stamp kube-apiserver "v$KUBE_VERSION") &&
	-x $DEST/etcd && -e $(stamp etcd "v$ETCD_VERSION") ]]; then
	echo "kube assets: $DEST has kube-apiserver v$KUBE_VERSION and etcd v$ETCD_VERSION; nothing to build"
	exit 0
fi
mkdir -p "$DEST"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# Staging modules are published as k8s.io/<name> v0.<minor>.<patch>.
STAGING_VERSION=v0.${KUBE_VERSION#*.}
# Published under no version: they stay out of the wrapper's go.mod.
UNPUBLISHED='k8s.io/sample-cli-plugin k8s.io/sample-controller'

# wrapper DIR MODULE VERSION [PIN...]: a module in DIR requiring MODULE@VERSION
# with every PIN ("path version") both required and replaced at that version.
wrapper() {
	local dir=$1 module=$2 version=$3
	shift 3
	mkdir -p "$dir"
	{
		echo "module warmroute.local/kubeassets"
		echo
		echo "go 1.27.0"
		echo
		echo "require $module $version"
		local pin
		for pin in "$@"; do
			echo "require $pin"
			echo "replace ${pin% *} => $pin"
		done
	} >"$dir/go.mod"
}

# install NAME VERSION DIR PACKAGE LDFLAGS: build PACKAGE in the wrapper DIR
# to DEST/NAME, stamped with VERSION.
install() {
	local name=$1 version=$2 dir=$3 pkg=$4 ldflags=$5
	if [[ -x $DEST/$name && -e $(stamp "$name" "$version") ]]; then
		echo "kube assets: $DEST/$name $version present"
		return
	fi
	rm -f "$DEST/.$name"-*
	echo "kube assets: building $name ($pkg)"
	(cd "$dir" && go build -trimpath -ldflags "-s -w $ldflags" -o "$DEST/$name.tmp" "$pkg")
	mv "$DEST/$name.tmp" "$DEST/$name"
	touch "$(stamp "$name" "$version")"
	ls -l "$DEST/$name"
}

build_etcd() {
	local dir=$WORK/etcd v=v$ETCD_VERSION pins=() m
	for m in go.etcd.io/etcd/api/v3 go.etcd.io/etcd/client/pkg/v3 \
		go.etcd.io/etcd/client/v3 go.etcd.io/etcd/pkg/v3; do
		pins+=("$m $v")
	done
	wrapper "$dir" go.etcd.io/etcd/server/v3 "$v" "${pins[@]}"
	install etcd "$v" "$dir" go.etcd.io/etcd/server/v3 \
		"-X go.etcd.io/etcd/api/v3/version.GitSHA=v$ETCD_VERSION"
}

build_apiserver() {
	local dir=$WORK/kube v=v$KUBE_VERSION pins=() m modfile
	modfile=$(cd "$WORK" && go mod download -json "k8s.io/kubernetes@$v" |
		sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
	# Every staging module k8s.io/kubernetes replaces with a ./staging path.
	for m in $(sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\1#p' "$modfile"); do
		[[ " $UNPUBLISHED " == *" $m "* ]] && continue
		pins+=("$m $STAGING_VERSION")
	done
	if ((${#pins[@]} == 0)); then
		echo "kube assets: no staging modules found in $modfile" >&2
		exit 1
	fi
	wrapper "$dir" k8s.io/kubernetes "$v" "${pins[@]}"
	local pkg=k8s.io/component-base/version
	install kube-apiserver "$v" "$dir" k8s.io/kubernetes/cmd/kube-apiserver \
		"-X $pkg.gitVersion=$v -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
}

build_etcd
build_apiserver
echo "kube assets: KUBEBUILDER_ASSETS=$DEST"
