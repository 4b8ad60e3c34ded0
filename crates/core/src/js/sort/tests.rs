use super::*;
use crate::js::{json, Value};

fn numbers(items: &[Value]) -> Vec<f64> {
    items.iter().map(|v| v.to_number().unwrap()).collect()
}

fn by_difference(keys: &[f64]) -> impl FnMut(usize, usize) -> bool + '_ {
    |x, y| keys[x] - keys[y] < 0.0
}

/// Every order V8 left the fixture's arrays in (fixtures/gen-v8-sort.mjs
/// wrote them, running each V8), for both ways V8 sorts short arrays.
#[test]
fn orders_match_v8() {
    let fixture = json::parse(include_str!("../../../fixtures/v8-sort.json")).unwrap();
    let Value::Array(engines) = fixture.get("engines") else { panic!("no engines") };
    let cut_offs: Vec<usize> = engines.iter().map(|e| e.get("insertionOnlyBelow").to_number().unwrap() as usize).collect();
    assert!(cut_offs.contains(&0) && cut_offs.iter().any(|&n| n > 4), "the fixture covers both sorts: {cut_offs:?}");
    let Value::Array(cases) = fixture.get("cases") else { panic!("no cases") };
    assert!(cases.len() > 800);
    let (mut checked, mut unlike_a_total_order) = (0, 0);
    for case in cases {
        let Value::Array(input) = case.get("input") else { panic!() };
        let Value::Array(sorted) = case.get("sorted") else { panic!() };
        let keys = numbers(input);
        let text = |order: Vec<usize>| json::stringify(&Value::Array(order.into_iter().map(|i| input[i].clone()).collect()));
        for (expected, &cut_off) in sorted.iter().zip(&cut_offs) {
            let expected = json::stringify(expected);
            let got = text(sort_order(keys.len(), cut_off, by_difference(&keys)));
            assert_eq!(got, expected, "V8 with cut-off {cut_off} sorts {}", json::stringify(case.get("input")).unwrap_or_default());
            checked += 1;
            let mut total: Vec<usize> = (0..keys.len()).collect();
            total.sort_by(|&a, &b| keys[a].total_cmp(&keys[b]));
            unlike_a_total_order += usize::from(text(total) != expected);
        }
    }
    assert!(unlike_a_total_order > checked / 10, "the fixture exercises inconsistent comparisons: {unlike_a_total_order} of {checked}");
}

#[test]
fn any_comparator_leaves_a_permutation() {
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let mut random = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for n in [0, 1, 2, 9, 10, 64, 65, 200, 1500] {
        for _ in 0..20 {
            let order = sort_order(n, 10, |_, _| random() % 3 == 0);
            let mut seen = order.clone();
            seen.sort_unstable();
            assert_eq!(seen, (0..n).collect::<Vec<_>>());
        }
    }
}

#[test]
fn consistent_comparator_sorts_stably() {
    let keys: Vec<f64> = (0..5000).map(|i| f64::from((i * 7919) % 101)).collect();
    let got = sort_order(keys.len(), 10, by_difference(&keys));
    let mut expected: Vec<usize> = (0..keys.len()).collect();
    expected.sort_by(|&a, &b| keys[a].total_cmp(&keys[b]));
    assert_eq!(got, expected);
}
