// A prediction's drivers as a person reads them: one per concept (tenure, renewal and term, billing,
// ARR trend, seats trend, payments, ticket volume, ticket tone, churn signals in tickets,
// cancellation notice, segment), its impact the exact sum of its features' impacts, so
// σ(base_logit + Σ impact) = probability still holds; the features stay underneath as detail.
//
// Each driver also says, in percentage points, how much this group adds to the probability against
// the model's reference customer (its centres: the scorecard's neutral values, a trained model's
// median customer): the probability minus the one it would have were this group's values the
// reference's, every other group held (positive: it raises the risk). Points are not additive:
// σ is not linear, so the points of two groups do not sum to the points of both.
import { FEATURES, type FeatureRow } from './features.ts';
import { DRIVER_GROUPS, type DriverGroup } from './model.ts';
import { sigmoid, type AdditiveModel } from './logistic.ts';

export interface FeatureDriver {
  feature: string;
  label: string;
  value: number;
  /** The reference customer's value of the feature (absent on predictions made before groups). */
  reference?: number;
  impact: number;
}

export interface GroupDriver {
  group: DriverGroup | 'other';
  label: string;
  /** Logit units: the sum of its features' impacts. */
  impact: number;
  /** Percentage points this group adds to the probability against the reference customer's values. */
  points: number;
  /** Every feature of the group has the reference customer's value (its impact is then 0). */
  at_reference: boolean;
  /** The single-prediction route only. */
  features?: FeatureDriver[];
}

/** How many groups a list item names before the rest is summed into `other`. */
export const LIST_DRIVERS = 5;

const GROUP_OF = new Map(FEATURES.map((f) => [f.key, f.group]));
const FEATURE_INDEX = new Map(FEATURES.map((f, j) => [f.key, j]));
const GROUP_ORDER = new Map<string, number>(DRIVER_GROUPS.map((g, i) => [g, i]));

/** Percentage points the probability σ(z) would lose were `impact` taken out of the logit z, to 0.01. */
export const pointsOf = (z: number, impact: number) => {
  const points = Math.round(10_000 * (sigmoid(z) - sigmoid(z - impact))) / 100;
  return points === 0 ? 0 : points; // never −0
};

const strongestFirst = (a: { impact: number; group: string }, b: { impact: number; group: string }) =>
  Math.abs(b.impact) - Math.abs(a.impact) || (GROUP_ORDER.get(a.group) ?? 99) - (GROUP_ORDER.get(b.group) ?? 99);

/** The probability of `row` under `model` with its drivers grouped, strongest first. */
export function groupedDrivers(
  model: AdditiveModel,
  row: Pick<FeatureRow, 'values' | 'labels' | 'groupLabels'>,
): { probability: number; base: number; drivers: GroupDriver[] } {
  const byGroup = new Map<DriverGroup, FeatureDriver[]>(DRIVER_GROUPS.map((g) => [g, []]));
  let z = model.base;
  model.features.forEach((f, j) => {
    const value = row.values[j]!;
    const impact = f.weight * (value - f.centre);
    z += impact;
    const index = FEATURE_INDEX.get(f.key);
    const group = GROUP_OF.get(f.key);
    // A feature a newer release dropped: still counted in the logit, shown under its own key.
    byGroup
      .get(group ?? 'segment')!
      .push({ feature: f.key, label: index === undefined ? f.key : row.labels[index]!, value, reference: f.centre, impact });
  });
  const drivers = [...byGroup].map(([group, features]): GroupDriver => {
    features.sort((a, b) => Math.abs(b.impact) - Math.abs(a.impact) || (a.feature < b.feature ? -1 : 1));
    const impact = features.reduce((sum, f) => sum + f.impact, 0);
    return {
      group,
      label: row.groupLabels[group],
      impact,
      points: 0,
      at_reference: features.every((f) => f.value === f.reference),
      features,
    };
  });
  for (const d of drivers) d.points = pointsOf(z, d.impact);
  drivers.sort(strongestFirst);
  return { probability: sigmoid(z), base: model.base, drivers };
}

type Stored = GroupDriver | { feature: string; label: string; value: number; impact: number };

/** Predictions stored before drivers were grouped (one driver per feature) read as groups until
 * their next rescore: the same impacts summed per group, labelled by the group's strongest feature. */
export function asGroups(stored: readonly Stored[], baseLogit: number): GroupDriver[] {
  if (stored.every((d) => 'group' in d)) return stored as GroupDriver[];
  const z = stored.reduce((sum, d) => sum + d.impact, baseLogit);
  const byGroup = new Map<DriverGroup, FeatureDriver[]>();
  for (const d of stored as FeatureDriver[]) {
    const group = GROUP_OF.get(d.feature) ?? 'segment';
    byGroup.set(group, [...(byGroup.get(group) ?? []), { feature: d.feature, label: d.label, value: d.value, impact: d.impact }]);
  }
  return [...byGroup]
    .map(([group, features]) => {
      const impact = features.reduce((sum, f) => sum + f.impact, 0);
      return { group, label: features[0]!.label, impact, points: pointsOf(z, impact), at_reference: impact === 0, features };
    })
    .sort(strongestFirst);
}

/** A list item's drivers: the five strongest groups without their features, then `other` with the
 * sum of the rest, so σ(base_logit + Σ impact) = probability holds on every item. */
export function listDrivers(stored: readonly Stored[], baseLogit: number): GroupDriver[] {
  const groups = asGroups(stored, baseLogit);
  const z = groups.reduce((sum, d) => sum + d.impact, baseLogit);
  const shown = groups.slice(0, LIST_DRIVERS).map(({ features: _features, ...d }) => d);
  const rest = groups.slice(LIST_DRIVERS);
  const impact = rest.reduce((sum, d) => sum + d.impact, 0);
  return [
    ...shown,
    {
      group: 'other',
      label: `${rest.length} more ${rest.length === 1 ? 'driver' : 'drivers'}`,
      impact,
      points: pointsOf(z, impact),
      at_reference: rest.every((d) => d.at_reference),
    },
  ];
}
