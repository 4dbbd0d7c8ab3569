//! A strategy the app does not ship, added here as data only, a registry row and a group of
//! parameters, gets its controls in the left panel, its colour, its Tune entries and README's
//! checks, with no edit under `src/ui`: the panels are drawn from the app's catalog, never from a
//! match on the `Strategy` enum or a hand-kept list of controls.

use ackscope::app::{AppCommand, AppState, Tab};
use ackscope::params::{Catalog, Group, Kind, Param};
use ackscope::ui::colors::rgb_for_theme;
use ackscope::ui::{window_ui, WindowView};
use ackscope_protocol::{AckPeer, ParamChange, ParamValue, Scenario, Strategy, StrategyInfo};
use egui::accesskit::Role;
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;

/// The new strategy's row. Its endpoint is the packet-ack peer (what it runs does not matter
/// here); the enum has no variant for it, so `strategy` holds a stand-in that no panel reads.
static ROW: StrategyInfo = StrategyInfo {
    strategy: Strategy::Acks,
    name: "teststrat",
    label: "Test strategy",
    colour: [250, 90, 40],
    settings: Some("teststrat"),
    summary: "a strategy added by a test, as data",
    has_messages: true,
    has_chunks: false,
    build: |s, side| Box::new(AckPeer::new(side, s.ack, 64)),
    own: |_| Box::new(()),
};

static GROUP: Group = Group { prefix: "teststrat", label: "Test strategy knobs" };

static PARAMS: [Param; 3] = [
    Param {
        name: "teststrat.hold_ms",
        label: "test hold ms",
        unit: "ms",
        kind: Kind::Number { min: 0.0, max: 500.0, integer: false, log: false },
        tip: "How long the test strategy holds a message.",
    },
    Param { name: "teststrat.twice", label: "test sends twice", unit: "", kind: Kind::Bool, tip: "Send twice." },
    Param {
        name: "teststrat.mode",
        label: "test mode",
        unit: "",
        kind: Kind::Choice(|| vec!["calm", "eager"]),
        tip: "How eager the test strategy is.",
    },
];

/// The app's catalog with the new strategy and its group added.
fn catalog() -> Catalog {
    let mut c = Catalog::builtin();
    c.strategies.push(&ROW);
    // Early in the group order, so its entries are near the top of the Tune tab's long list.
    c.groups.insert(1, &GROUP);
    c.params.extend(PARAMS.iter());
    c
}

type Window = (AppState, WindowView, Vec<AppCommand>);

/// The window's views over a state with the test's catalog; what they ask for is kept, not
/// applied (the scenario has no field for the new parameters).
fn window(tab: Tab) -> Harness<'static, Window> {
    let mut state = AppState::new(Scenario::default(), || {});
    state.catalog = catalog();
    state.settings.intro_dismissed = true;
    state.settings.tab = tab;
    Harness::builder().with_size(egui::vec2(1280.0, 800.0)).build_ui_state(
        |ui, w: &mut Window| window_ui(&w.0, &mut w.1, ui, &mut w.2),
        (state, WindowView::default(), Vec::new()),
    )
}

#[test]
fn its_parameters_get_controls_in_its_own_group_of_the_left_panel() {
    let mut h = window(Tab::Overview);
    h.step();
    assert!(h.query_by_label("Test strategy knobs").is_none(), "strategy groups start inside a closed section");
    h.get_by_label("Strategy parameters").click();
    h.step();
    h.step();
    // Not the running strategy: its group starts closed, headed by its label.
    h.get_by_label("Test strategy knobs").click();
    h.step();
    h.step();
    h.get_by_role_and_label(Role::Slider, "test hold ms").set_value_accesskit(120.0);
    h.step();
    // Through accesskit (as a screen reader would): the group's last control may sit under the
    // pinned estimates section at 800 px until the panel is scrolled, and what is tested is that
    // the control exists and applies its typed change.
    h.get_by_label("test sends twice").click_accesskit();
    h.step();
    assert!(h.query_by_label("test mode").is_some(), "the choice has its control");
    let cmds = &h.state().2;
    let want = [
        AppCommand::SetParam(ParamChange::new("teststrat.hold_ms", 120.0)),
        AppCommand::SetParam(ParamChange::new("teststrat.twice", true)),
    ];
    for w in &want {
        assert!(cmds.contains(w), "{w:?} not among {cmds:?}");
    }
}

#[test]
fn its_colour_is_its_rows_and_its_own_in_both_themes() {
    let c = catalog();
    assert!(std::ptr::eq(c.strategy("teststrat").expect("in the catalog"), &ROW));
    for dark in [true, false] {
        let mine = rgb_for_theme(ROW.colour, dark);
        for other in Catalog::builtin().strategies {
            assert_ne!(rgb_for_theme(other.colour, dark), mine, "{} has the same colour (dark {dark})", other.name);
        }
    }
}

#[test]
fn the_tune_tab_offers_its_parameters_and_sweeps_it_by_name() {
    let mut h = window(Tab::Tune);
    h.step();
    // Its checkbox among the strategies to sweep.
    h.get_by_label("teststrat").click();
    h.step();
    assert!(h.state().1.panels.tune.setup.strategies.iter().any(|s| s == "teststrat"), "ticked by name");
    // Its number parameter in the list of what to vary, under its group's label.
    h.get_by_role_and_label(Role::ComboBox, "vary").click();
    h.step();
    h.step();
    assert!(h.query_by_label("Test strategy knobs").is_some(), "its group heads its parameters");
    h.get_by_label("teststrat.hold_ms").click();
    h.step();
    assert_eq!(h.state().1.panels.tune.setup.param, "teststrat.hold_ms");
}

#[test]
fn readmes_checks_cover_it() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).expect("README.md");
    let c = catalog();
    Catalog::builtin().check_readme(&readme).expect("README follows the shipped catalog");
    let e = c.check_readme(&readme).unwrap_err();
    assert!(e.contains("teststrat") && e.contains("Test strategy"), "{e}");
    // Once README has its strategy row, the parameters section must hold its parameters.
    let with_row = readme.replacen("| `glenn` |", "| `teststrat` | Test strategy |\n| `glenn` |", 1);
    let e = c.check_readme(&with_row).unwrap_err();
    assert!(e.contains("| `teststrat.hold_ms` | 0 - 500 | ms |"), "{e}");
    let (begin, end) = ("<!-- params:begin -->\n", "<!-- params:end -->");
    let start = with_row.find(begin).unwrap() + begin.len();
    let stop = with_row[start..].find(end).unwrap() + start;
    let fixed = format!("{}{}{}", &with_row[..start], c.markdown(), &with_row[stop..]);
    c.check_readme(&fixed).expect("README with its rows passes");
    assert!(fixed.contains("| `teststrat.mode` | calm, eager |"));
    // The values the new controls send are typed, as every other control's.
    assert_eq!(ParamChange::new("teststrat.hold_ms", 120.0).value(), &ParamValue::Int(120));
}
