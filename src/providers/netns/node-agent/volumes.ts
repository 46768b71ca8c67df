// A pod's volumes, written on the node as the kubelet's volume plugins write them
// (https://kubernetes.io/docs/concepts/storage/volumes/ and .../projected-volumes/): each volume is
// a directory under the pod's directory that containers bind-mount at their mountPath.
//  - emptyDir: an empty directory that lives as long as the pod.
//  - configMap / secret: a file per key (or per `items` entry, at its path, with its mode), mode
//    defaultMode (0644 when unset); a missing object fails the mount unless `optional`.
//  - downwardAPI: a file per item with the fieldRef's value.
//  - projected: the sources above plus serviceAccountToken (TokenRequest bound to the pod) in one dir.
//  - hostPath: the host path itself.
// Contents are written once, when the pod starts: updates of a ConfigMap are not propagated (the
// kubelet's periodic resync is not modelled; the harness never changes a mounted ConfigMap).

import { chmod, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

import type { PodObjects } from './api-objects.ts';
import { fieldRefValue } from './env.ts';
import type { DataObject, DownwardAPIVolumeFile, KeyToPath, Pod, VolumeSpec } from './pod-types.ts';

export class VolumeError extends Error {}

const DEFAULT_MODE = 0o644;

/** A relative path that stays inside the volume (the API server validates it too). */
function safeJoin(root: string, rel: string): string {
  const target = path.resolve(root, rel);
  if (target !== root && !target.startsWith(root + path.sep)) throw new VolumeError(`path ${rel} leaves its volume`);
  return target;
}

async function writeItem(root: string, rel: string, content: string | Buffer, mode: number): Promise<void> {
  const file = safeJoin(root, rel);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, content);
  await chmod(file, mode);
}

async function writeData(root: string, data: DataObject, items: KeyToPath[] | undefined, mode: number, what: string): Promise<void> {
  const value = (key: string): string | Buffer | undefined => data.binaryData?.[key] ?? data.data[key];
  if (items && items.length > 0) {
    for (const item of items) {
      const content = value(item.key);
      if (content === undefined) throw new VolumeError(`${what}: key ${item.key} not found`);
      await writeItem(root, item.path, content, item.mode ?? mode);
    }
    return;
  }
  for (const key of new Set([...Object.keys(data.data), ...Object.keys(data.binaryData ?? {})])) await writeItem(root, key, value(key)!, mode);
}

async function writeDownward(root: string, pod: Pod, items: DownwardAPIVolumeFile[], mode: number, podIP: string, hostIP: string): Promise<void> {
  for (const item of items) {
    let content = '';
    if (item.fieldRef) content = fieldRefValue(pod, item.fieldRef.fieldPath, podIP, hostIP);
    else if (item.resourceFieldRef) content = item.resourceFieldRef.resource.includes('cpu') ? '2' : String(8 * 1024 ** 3);
    await writeItem(root, item.path, content, item.mode ?? mode);
  }
}

export interface VolumeContext {
  pod: Pod;
  podIP: string;
  hostIP: string;
  objects: PodObjects;
}

/** Writes one volume under `root`; returns the host path containers bind-mount. */
export async function setUpVolume(volume: VolumeSpec, root: string, ctx: VolumeContext): Promise<string> {
  const ns = ctx.pod.metadata.namespace ?? 'default';
  if (volume.hostPath) return volume.hostPath.path;
  await mkdir(root, { recursive: true });
  if (volume.emptyDir) {
    await chmod(root, 0o777);
    return root;
  }
  if (volume.configMap) {
    const cm = await ctx.objects.configMap(ns, volume.configMap.name);
    if (!cm) {
      if (volume.configMap.optional) return root;
      throw new VolumeError(`MountVolume.SetUp failed for volume "${volume.name}" : configmap "${volume.configMap.name}" not found`);
    }
    await writeData(root, cm, volume.configMap.items, volume.configMap.defaultMode ?? DEFAULT_MODE, `configmap ${volume.configMap.name}`);
    return root;
  }
  if (volume.secret) {
    const secret = await ctx.objects.secret(ns, volume.secret.secretName);
    if (!secret) {
      if (volume.secret.optional) return root;
      throw new VolumeError(`MountVolume.SetUp failed for volume "${volume.name}" : secret "${volume.secret.secretName}" not found`);
    }
    await writeData(root, secret, volume.secret.items, volume.secret.defaultMode ?? DEFAULT_MODE, `secret ${volume.secret.secretName}`);
    return root;
  }
  if (volume.downwardAPI) {
    await writeDownward(root, ctx.pod, volume.downwardAPI.items ?? [], volume.downwardAPI.defaultMode ?? DEFAULT_MODE, ctx.podIP, ctx.hostIP);
    return root;
  }
  if (volume.projected) {
    const mode = volume.projected.defaultMode ?? DEFAULT_MODE;
    for (const source of volume.projected.sources ?? []) {
      if (source.serviceAccountToken) {
        const token = await ctx.objects.token(ctx.pod, source.serviceAccountToken.audience, source.serviceAccountToken.expirationSeconds);
        await writeItem(root, source.serviceAccountToken.path, token, mode);
      } else if (source.configMap) {
        const cm = await ctx.objects.configMap(ns, source.configMap.name);
        if (!cm) {
          if (source.configMap.optional) continue;
          throw new VolumeError(`MountVolume.SetUp failed for volume "${volume.name}" : configmap "${source.configMap.name}" not found`);
        }
        await writeData(root, cm, source.configMap.items, mode, `configmap ${source.configMap.name}`);
      } else if (source.secret) {
        const secret = await ctx.objects.secret(ns, source.secret.name);
        if (!secret) {
          if (source.secret.optional) continue;
          throw new VolumeError(`MountVolume.SetUp failed for volume "${volume.name}" : secret "${source.secret.name}" not found`);
        }
        await writeData(root, secret, source.secret.items, mode, `secret ${source.secret.name}`);
      } else if (source.downwardAPI) {
        await writeDownward(root, ctx.pod, source.downwardAPI.items ?? [], mode, ctx.podIP, ctx.hostIP);
      }
    }
    return root;
  }
  throw new VolumeError(`volume "${volume.name}": unsupported volume type (the zerodrop node agent supports emptyDir, configMap, secret, downwardAPI, projected, hostPath)`);
}
