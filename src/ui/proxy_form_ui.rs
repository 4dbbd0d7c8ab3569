//! The transport choice *proxy*: a small window with where to listen, the server to forward to
//! and the decoder, whose *Start proxy* starts a new recording of the conditioning proxy
//! ([`AppCommand::StartProxy`]). What is typed is kept in egui's memory (view state, not the
//! model's) so it survives closing the form.

use crate::app::{AppCommand, AppState, ProxyRequest};
use crate::model::Origin;

/// The decoders offered (`header:FILE.ron` is typed in the field itself).
const DECODERS: [&str; 6] = ["auto", "ackscope", "reliable", "enet", "kcp", "none"];

/// The form as typed, and whether it is shown.
#[derive(Debug, Clone)]
pub struct ProxyForm {
    pub open: bool,
    pub listen: String,
    pub forward: String,
    pub decode: String,
}

impl Default for ProxyForm {
    fn default() -> Self {
        Self { open: false, listen: "127.0.0.1:7000".into(), forward: "127.0.0.1:7777".into(), decode: "auto".into() }
    }
}

impl ProxyForm {
    fn id() -> egui::Id {
        egui::Id::unique("proxy_form")
    }

    /// The form kept in `ctx`'s memory.
    pub fn load(ctx: &egui::Context) -> Self {
        ctx.data_mut(|d| d.get_temp::<ProxyForm>(Self::id())).unwrap_or_default()
    }

    pub fn store(self, ctx: &egui::Context) {
        ctx.data_mut(|d| d.insert_temp(Self::id(), self));
    }
}

/// True when the lane shown is a live proxy's (the transport choice then reads *proxy*).
pub fn proxy_running(state: &AppState) -> bool {
    state.is_running() && state.lanes.first().is_some_and(|l| matches!(l.info.origin, Origin::Proxy { .. }))
}

/// The form's window, when open.
pub fn proxy_form_ui(ctx: &egui::Context, cmds: &mut Vec<AppCommand>) {
    let mut form = ProxyForm::load(ctx);
    if !form.open {
        return;
    }
    let mut open = true;
    egui::Window::new("Proxy").open(&mut open).resizable(false).collapsible(false).show(ctx, |ui| {
        ui.label("Relays real game clients to a real server; each client gets the current link.");
        egui::Grid::new("proxy_form_grid").num_columns(2).show(ui, |ui| {
            let l = ui.label("listen");
            ui.text_edit_singleline(&mut form.listen)
                .labelled_by(l.id)
                .on_hover_text("Where game clients send to, e.g. 127.0.0.1:7000 or [::1]:7000");
            ui.end_row();
            let l = ui.label("forward");
            ui.text_edit_singleline(&mut form.forward).labelled_by(l.id).on_hover_text("The real server's address");
            ui.end_row();
            let l = ui.label("decode");
            ui.horizontal(|ui| {
                egui::ComboBox::from_id_salt("proxy_decode").selected_text(form.decode.clone()).show_ui(ui, |ui| {
                    for d in DECODERS {
                        ui.selectable_value(&mut form.decode, d.to_string(), d);
                    }
                });
                ui.text_edit_singleline(&mut form.decode)
                    .labelled_by(l.id)
                    .on_hover_text("Or header:FILE.ron, a declarative description of a game's own header");
            });
            ui.end_row();
        });
        if ui.button("Start proxy").clicked() {
            cmds.push(AppCommand::StartProxy(ProxyRequest {
                listen: form.listen.trim().to_string(),
                forward: form.forward.trim().to_string(),
                decode: form.decode.trim().to_string(),
            }));
            form.open = false;
        }
    });
    form.open &= open;
    form.store(ctx);
}
