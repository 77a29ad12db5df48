// Writes an account-owned entity's changes as the ORM's flush would (the changed properties,
// onUpdate stamps when anything changed) but finds the row by its id and its account, so
// the statement names its shard (docs/scaling.md, step 5); the flush finds it by id alone.
// The entity is left clean, so no later flush writes the same changes again.
import type { EntityData, EntityManager, FilterQuery } from '@mikro-orm/postgresql';

type Owned = { id: string; account: { id: string } };

/** Returns whether anything changed (nothing changed: no statement). */
export async function flushOwned<T extends Owned>(em: EntityManager, entity: T): Promise<boolean> {
  const meta = em.getMetadata().get<T>(entity.constructor);
  const comparator = em.getComparator();
  const unitOfWork = em.getUnitOfWork();
  const changed = Object.keys(comparator.diffEntities(meta.class, unitOfWork.getOriginalEntityData(entity) ?? {}, comparator.prepareEntity(entity)));
  if (changed.length === 0) return false;
  const record = entity as Record<string, unknown>;
  for (const prop of meta.props) {
    if (prop.onUpdate && !changed.includes(prop.name)) {
      record[prop.name] = prop.onUpdate(entity, em);
      changed.push(prop.name);
    }
  }
  const data = Object.fromEntries(changed.map((name) => [name, record[name]])) as EntityData<T>;
  await em.nativeUpdate(meta.class, { id: entity.id, account: entity.account.id } as FilterQuery<T>, data);
  unitOfWork.merge(entity);
  return true;
}
