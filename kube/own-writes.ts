// The watch event of an object this controller just wrote says nothing the reconcile that wrote it did
// not know. Queued anyway, it runs a second reconcile that reads its primary from a cache which may not
// hold the status written a moment later, sees it "not synced" and writes that status again (measured:
// 416 extra ExternalSecret status writes in a 1,000-ExternalSecret sync). So a reconciler records the
// resourceVersion each write returned, and the watch drops exactly that event. Any other change to the
// object (someone else's edit, a deletion) has another resourceVersion and still wakes its owner.
import type { ObjectEvent } from './informer.ts';
import { objectKey, type KubeObject } from './objects.ts';

export class OwnWrites {
  private readonly written = new Map<string, string>();

  /** `max`: entries kept; the oldest go first (an event that never comes, e.g. after a relist, must not pin memory). */
  constructor(private readonly max = 100_000) {}

  /** The object as the apiserver returned it from our write. */
  record(obj: KubeObject | undefined): void {
    const rv = obj?.metadata.resourceVersion;
    if (!obj || !rv) return;
    const key = objectKey(obj);
    this.written.delete(key);
    this.written.set(key, rv);
    if (this.written.size > this.max) this.written.delete(this.written.keys().next().value!);
  }

  /** Predicate for a watch: false for the add/update event of our own last write (consumed once). */
  readonly notOwn = (ev: ObjectEvent): boolean => {
    if (ev.type !== 'add' && ev.type !== 'update') return true;
    const key = objectKey(ev.obj);
    if (this.written.get(key) !== ev.obj.metadata.resourceVersion) return true;
    this.written.delete(key);
    return false;
  };

  get size(): number {
    return this.written.size;
  }
}
