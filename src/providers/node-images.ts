// The node images of the clusters zerodrop creates, by Kubernetes minor version: data only, so that
// checking --kube-version does not load the cluster providers (see providers/index.ts).

/**
 * The kind release whose node images KIND_NODE_IMAGES pins; prerequisites.ts compares the installed
 * kind with it. Release notes: https://github.com/kubernetes-sigs/kind/releases/tag/v0.33.0 (see
 * docs/kubernetes-pins.md for what of it could be read here).
 */
export const KIND_VERSION = 'v0.33.0';

/**
 * Node images kind v0.33.0 publishes, pinned by digest: kind supports a node image only "with the
 * kind version they were released with" (https://kind.sigs.k8s.io/docs/design/node-image), and a
 * tag alone may name a build for another release. The last four minor versions; the nightly matrix
 * runs each.
 * Source: the "Images pre-built for this release" list of
 * https://github.com/kubernetes-sigs/kind/releases/tag/v0.33.0. Not readable here in upstream's own
 * copy (kind's release notes live on GitHub's release page, not in its repository); these four
 * tag@digest pairs are the ones copies of those notes quote (docs/kubernetes-pins.md), and only a
 * real `kind create cluster --image` confirms them (it pulls by digest and fails on a wrong one).
 */
export const KIND_NODE_IMAGES: Readonly<Record<string, string>> = {
  '1.37': 'kindest/node:v1.37.0@sha256:a1ed56cfb0e7b93589bdf97c8cd566405a265939e3620fc4f5de89adff580ae5',
  '1.36': 'kindest/node:v1.36.4@sha256:099e049362a1526b2db71494e1947aae99bd16290d7c895f2b7ea312e3cbfaed',
  '1.35': 'kindest/node:v1.35.8@sha256:07b2536e30b803ed61d1677a79df6115f798ce64c80f9e22f6ed45afd09323c0',
  '1.34': 'kindest/node:v1.34.11@sha256:44e222ee2132dab25ff87301682f89eb82c7880ea3a1bf543bfe9708fd08d67d',
};
export const DEFAULT_KUBE_VERSION = '1.36';

// k3s: the rancher/k3s tags testcontainers' K3s module starts (tags write k3s's `+` as `-`).
// NOT confirmed upstream here: k3s's releases live on GitHub's release page, which no stored copy
// holds; v1.35.6+k3s1 appears in third-party pins, and a later v1.35 patch (v1.35.8+k3s1) exists
// by the same kind of evidence, so these are not "the newest patch". Tags, not digests: only a
// real pull confirms them (docs/kubernetes-pins.md).
export const K3S_IMAGES: Readonly<Record<string, string>> = {
  '1.35': 'rancher/k3s:v1.35.6-k3s1',
  '1.34': 'rancher/k3s:v1.34.9-k3s1',
};
export const DEFAULT_K3S_VERSION = '1.35';
