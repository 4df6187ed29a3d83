// Which work-queue priority an informer event's keys get (controller-runtime's priority queue rules, plus
// one step for metadata-only changes of the primary): new objects and real changes first, the initial
// list, resyncs and periodic requeues last. Pure: the event in, a priority out.
import type { ObjectEvent } from './informer.ts';
import { Priority } from './workqueue.ts';

/**
 * High for a new object, a change, a deletion; Low for an object of the initial list (or replayed to a
 * late handler) and for a resync or an update that changed nothing (same resourceVersion).
 */
export function eventPriority(ev: ObjectEvent): number {
  if (ev.type === 'resync') return Priority.Low;
  if (ev.type === 'add' && ev.initial) return Priority.Low;
  if (ev.type === 'update' && ev.old.metadata.resourceVersion === ev.obj.metadata.resourceVersion) return Priority.Low;
  return Priority.High;
}

/**
 * For the controller's own kind: as eventPriority, but an update that leaves the generation (the spec) and
 * the deletion as they were, i.e. labels, annotations or status only, is Refresh: ESO's force-sync
 * annotation put on 10,000 ExternalSecrets must not hold back one created meanwhile.
 */
export function primaryEventPriority(ev: ObjectEvent): number {
  const p = eventPriority(ev);
  if (p !== Priority.High || ev.type !== 'update') return p;
  const { old, obj } = ev;
  const specSame = obj.metadata.generation !== undefined && old.metadata.generation === obj.metadata.generation;
  const deletionSame = Boolean(old.metadata.deletionTimestamp) === Boolean(obj.metadata.deletionTimestamp);
  return specSame && deletionSame ? Priority.Refresh : p;
}
