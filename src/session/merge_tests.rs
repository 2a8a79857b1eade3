//! Saves from several processes merge (SPEC §7.3a): each keeps the turns
//! it added, whatever the others wrote meanwhile.

use super::*;

fn turn(q: &str) -> [HistoryMessage; 2] {
    [
        HistoryMessage::user(q),
        HistoryMessage::assistant(format!("answer to {q}")),
    ]
}

fn contents(s: &Session) -> Vec<String> {
    s.messages.iter().map(|m| m.content.clone()).collect()
}

#[test]
fn two_holders_of_one_session_keep_both_their_turns() {
    let dir = tempfile::tempdir().unwrap();
    let mut first = Session::new(dir.path(), "shop", "sqlite");
    let mut history = turn("q1").to_vec();
    assert!(first.save_history(&history, 0).unwrap());
    // A second process restores the session as it is now.
    let mut second = Session::load(&first.path).unwrap();
    let mut other = second.messages.clone();
    other.extend(turn("from second"));
    second.save_history(&other, 0).unwrap();
    // The first one saves its next turn without knowing of the second's.
    history.extend(turn("q2"));
    first.save_history(&history, 0).unwrap();
    let on_disk = Session::load(&first.path).unwrap();
    assert_eq!(
        contents(&on_disk),
        [
            "q1",
            "answer to q1",
            "from second",
            "answer to from second",
            "q2",
            "answer to q2"
        ]
    );
    // The first one now holds the merged conversation, the other's turn marked.
    assert_eq!(contents(&first), contents(&on_disk));
    let marked: Vec<bool> = (0..6).map(|i| first.is_foreign(i)).collect();
    assert_eq!(marked, [false, false, true, true, false, false]);
    // Saving again adds nothing twice.
    let merged = first.messages.clone();
    first.save_history(&merged, 0).unwrap();
    assert_eq!(Session::load(&first.path).unwrap().messages.len(), 6);
}

#[test]
fn a_cleared_context_keeps_its_place_after_a_merge() {
    let dir = tempfile::tempdir().unwrap();
    let mut first = Session::new(dir.path(), "shop", "sqlite");
    let mut history = turn("q1").to_vec();
    first.save_history(&history, 0).unwrap();
    let mut second = Session::load(&first.path).unwrap();
    let mut other = second.messages.clone();
    other.extend(turn("b"));
    second.save_history(&other, 0).unwrap();
    // The first asks q2, then `/clear`s: its context starts after q2.
    history.extend(turn("q2"));
    first.save_history(&history, 4).unwrap();
    // q2 is at 4..6 in the merged list; the context starts after it.
    assert_eq!(first.messages[4].content, "q2");
    assert_eq!(first.context_start, 6);
}

#[test]
fn files_without_ids_merge_by_position_and_get_ids() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.json");
    fs::write(
        &path,
        r#"{"version":1,"metadata":{"created_at":"2026-01-26T10:00:00Z","last_updated":"2026-01-26T10:00:00Z","data_source":"shop","database_type":"sqlite"},
           "messages":[{"role":"user","content":"old","timestamp":"2026-01-26T10:00:05Z"}]}"#,
    )
    .unwrap();
    let mut a = Session::load(&path).unwrap();
    let mut b = Session::load(&path).unwrap();
    let mut ha = a.messages.clone();
    ha.extend(turn("a"));
    let mut hb = b.messages.clone();
    hb.extend(turn("b"));
    a.save_history(&ha, 0).unwrap();
    b.save_history(&hb, 0).unwrap();
    let on_disk = Session::load(&path).unwrap();
    assert_eq!(
        contents(&on_disk),
        ["old", "a", "answer to a", "b", "answer to b"]
    );
    let text = fs::read_to_string(&path).unwrap();
    assert_eq!(text.matches("\"id\"").count(), 5, "{text}");
}

#[test]
fn a_moved_session_is_written_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("elsewhere.json");
    let mut unrelated = Session::new(dir.path(), "x", "sqlite");
    unrelated.path = other.clone();
    unrelated.save_history(&turn("unrelated"), 0).unwrap();
    let mut s = Session::new(dir.path(), "shop", "sqlite");
    s.save_history(&turn("mine"), 0).unwrap();
    s.move_to(other.clone());
    let history = s.messages.clone();
    s.save_history(&history, 0).unwrap();
    assert_eq!(
        contents(&Session::load(&other).unwrap()),
        ["mine", "answer to mine"]
    );
}
