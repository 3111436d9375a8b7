// The browser client: a lobby, a table to play at, a table to watch. Plain JavaScript, no build step.
//
// Everything it knows comes from the gateway over one WebSocket (/ws); everything it may do is what
// the gateway says the rules offer now (`legal`), sent back as commands the table decides. Tokens live
// in localStorage (the player token, a seat token per table) and sessionStorage (spectator tokens), so
// a reload or a reconnect resumes: the page says the last seq it has and gets the events it missed.

const $ = (sel) => document.querySelector(sel);
const h = (tag, attrs = {}, ...children) => {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "onclick") el.addEventListener("click", v);
    else if (k === "class") el.className = v;
    else if (v !== undefined && v !== null && v !== false) el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return el;
};
const money = (n) => "$" + Number(n).toLocaleString("en-US");

// -- the connection ---------------------------------------------------------------------------------

let ws = null;
let nextId = 1;
const waiting = new Map();
let backoff = 250;

function connect() {
  ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws");
  ws.onopen = () => {
    backoff = 250;
    $("#link").textContent = "connected";
    route();
  };
  ws.onclose = () => {
    $("#link").textContent = "reconnecting…";
    for (const [, p] of waiting) p.reject({ code: "UNAVAILABLE", message: "connection lost" });
    waiting.clear();
    setTimeout(connect, backoff);
    backoff = Math.min(backoff * 2, 4000);
  };
  ws.onmessage = (m) => {
    const msg = JSON.parse(m.data);
    if (msg.id !== undefined && msg.id !== null && waiting.has(msg.id)) {
      const p = waiting.get(msg.id);
      waiting.delete(msg.id);
      msg.ok ? p.resolve(msg.result) : p.reject(msg.error);
    } else if (msg.type) {
      onPush(msg);
    } else if (msg.ok === false) {
      showNotice(`${msg.error.code}: ${msg.error.message}`);
    }
  };
}

function call(op, fields = {}) {
  return new Promise((resolve, reject) => {
    if (!ws || ws.readyState !== WebSocket.OPEN) return reject({ code: "UNAVAILABLE", message: "not connected" });
    const id = nextId++;
    waiting.set(id, { resolve, reject });
    ws.send(JSON.stringify({ id, op, ...fields }));
  });
}

function showNotice(text) {
  const n = $("#notice");
  n.textContent = text;
  n.hidden = !text;
}

// -- tokens ---------------------------------------------------------------------------------------

const me = () => JSON.parse(localStorage.getItem("monopoly.player") || "null");
const seatToken = (t) => localStorage.getItem("monopoly.seat." + t);
const spectatorToken = (t) => sessionStorage.getItem("monopoly.spectate." + t);

// -- routing: #/ (lobby), #/table/<id> (play, or watch with a spectator token) -----------------------

let lobbyTimer = null;
window.addEventListener("hashchange", route);

function route() {
  const m = location.hash.match(/^#\/(table|watch)\/([\w:.-]+)$/);
  clearInterval(lobbyTimer);
  $("#who").textContent = me() ? `signed in as ${me().name}` : "";
  if (m) {
    $("#lobby").hidden = true;
    $("#table").hidden = false;
    openTable(m[2], m[1] === "watch");
  } else {
    $("#table").hidden = true;
    $("#lobby").hidden = false;
    table.id = null;
    call("unwatch").catch(() => {});
    showLobby();
    lobbyTimer = setInterval(refreshLobby, 2000);
  }
}

// -- the lobby ------------------------------------------------------------------------------------

const MODES = ["classic", "speed", "duel", "team", "hasbro"];

function showLobby() {
  $("#signin").hidden = !!me();
  refreshLobby();
  if (me()) {
    call("my_match", { player_token: me().player_token }).then(gotMatch, () => {});
    // Waiting in a queue when the connection dropped: follow the ticket again, or the match is missed.
    if (sessionStorage.getItem("monopoly.queued")) call("watch_queue", { player_token: me().player_token }).catch(() => {});
  }
}

$("#register").addEventListener("click", async () => {
  const name = $("#guest-name").value.trim() || "guest";
  try {
    const p = await call("register", { name });
    localStorage.setItem("monopoly.player", JSON.stringify(p));
    route();
  } catch (e) {
    showNotice(`${e.code}: ${e.message}`);
  }
});

async function refreshLobby() {
  let lobby;
  try {
    lobby = await call("lobby", me() ? { player_token: me().player_token } : {});
  } catch {
    return;
  }
  const counts = lobby.waiting || {};
  $("#queues").replaceChildren(
    ...MODES.map((mode) =>
      h("div", { class: "queue" },
        h("button", { "data-mode": mode, onclick: () => enqueue(mode), disabled: !me() }, `Queue ${mode}`),
        h("span", { class: "waiting", "data-mode": mode }, ` ${counts[mode] || 0} waiting`))));
  $("#lobbies").replaceChildren(
    ...(lobby.lobbies || []).map((l) =>
      h("div", { class: "lobby" },
        h("b", {}, `Table ${l.lobby_id}`), ` ${l.members.length}/${l.seats} seated, host ${hostName(l)}`,
        me() && l.host_player_id === me().player_id
          ? h("button", { onclick: () => startCustom(l.lobby_id) }, "Start")
          : h("button", { onclick: () => joinCustom(l.lobby_id), disabled: !me() }, "Join"),
        h("pre", { class: "rules" }, l.rule_card))));
  $("#running").replaceChildren(
    ...(lobby.running || []).map((t) =>
      h("div", { class: "running", "data-table": t.table_id },
        h("b", {}, t.table_id), ` ${t.mode}: ${t.seats.map((s) => s.display_name + (s.is_bot ? " (bot)" : "")).join(", ")} `,
        h("button", {
          class: "watch",
          disabled: !t.spectator_token,
          onclick: () => {
            sessionStorage.setItem("monopoly.spectate." + t.table_id, t.spectator_token);
            location.hash = `#/watch/${t.table_id}`;
          },
        }, "Watch"))));
  if (!(lobby.running || []).length) $("#running").textContent = "none right now";
}

const hostName = (l) => (l.members.find((m) => m.is_host) || { display_name: "?" }).display_name;

async function enqueue(mode) {
  try {
    const party = $("#party-id").value.trim();  // R4: friends queue with the same code and size
    const status = await call("enqueue", {
      player_token: me().player_token,
      mode,
      bot_fill: $("#bot-fill").checked,
      party_id: party,
      party_size: party ? +$("#party-size").value : 0,
    });
    showQueue(status);
  } catch (e) {
    showNotice(`${e.code}: ${e.message}${e.rule_id ? ` (rule ${e.rule_id})` : ""}`);
  }
}

function showQueue(s) {
  const box = $("#queue-status");
  if (s.status === "waiting") sessionStorage.setItem("monopoly.queued", s.mode);
  else sessionStorage.removeItem("monopoly.queued");
  if (s.status === "waiting") {
    box.replaceChildren(
      h("span", { class: "ticket" }, `In the ${s.mode} queue${s.party_id ? ` with party ${s.party_id}` : ""}: position ${s.position} of ${s.waiting}, about ${Math.round(s.estimated_wait_ms / 1000)} s`),
      h("button", { class: "danger", onclick: () => call("cancel", { player_token: me().player_token }).then(showQueue) }, "Leave"));
  } else if (s.status === "cancelled") {
    box.textContent = "You left the queue.";
  } else if (s.status === "matched") {
    gotMatch(s.match);
  }
}

function gotMatch(match) {
  if (!match || !match.table_id || !match.seat_token || match.status === "finished") return;
  localStorage.setItem("monopoly.seat." + match.table_id, match.seat_token);
  location.hash = `#/table/${match.table_id}`;
}

async function joinCustom(id) {
  try {
    await call("custom_join", { player_token: me().player_token, lobby_id: id });
    refreshLobby();
  } catch (e) {
    showNotice(`${e.code}: ${e.message}`);
  }
}

async function startCustom(id) {
  try {
    const l = await call("custom_start", {
      player_token: me().player_token,
      lobby_id: id,
      bot_fill: $("#host-bot-fill").checked,
    });
    gotMatch(l.match);
  } catch (e) {
    showNotice(`${e.code}: ${e.message}`);
  }
}

$("#host").addEventListener("click", async () => {
  if (!me()) return showNotice("sign in first");
  // X5: every host setting; an empty minute or round count is "never" (null).
  const orNever = (sel) => ($(sel).value.trim() === "" ? null : +$(sel).value);
  const settings = {
    starting_cash: +$("#host-cash").value,
    turn_seconds: +$("#host-turn").value,
    salary_stop_minute: orNever("#host-salary"),
    tax_start_minute: orNever("#host-tax"),
    mortgage_rounds: orNever("#host-mortgage"),
    build_mode: $("#host-build").value,
    speed_die: $("#host-speed-die").checked,
  };
  try {
    await call("custom_create", { player_token: me().player_token, settings, seats: +$("#host-seats").value });
    refreshLobby();
  } catch (e) {
    showNotice(`${e.code}: ${e.message}${e.rule_id ? ` (rule ${e.rule_id})` : ""}`);
  }
});

// -- the table ------------------------------------------------------------------------------------

const table = { id: null, seat: -1, board: [], view: null, legal: [], lastSeq: 0, deadline: 0, auction: null, trades: [] };

async function openTable(id, spectate) {
  const token = spectate ? spectatorToken(id) : seatToken(id) || spectatorToken(id);
  if (!token) {
    showNotice("No seat or spectator token for this table: go back to the lobby.");
    return;
  }
  if (table.id !== id) {
    Object.assign(table, { id, seat: -1, board: [], view: null, legal: [], lastSeq: 0, auction: null, trades: [] });
    $("#log").replaceChildren();
  }
  try {
    const r = await call("watch", { table_id: id, token, from_seq: table.lastSeq });
    table.seat = r.seat;
    $("#role").textContent = r.seat >= 0 ? `You play seat ${r.seat}` : "Spectating";
    $("#role").dataset.role = r.seat >= 0 ? "player" : "spectator";
  } catch (e) {
    showNotice(`${e.code}: ${e.message}`);
  }
}

function onPush(msg) {
  if (msg.type === "queue") return showQueue(msg.status);
  if (msg.type === "notice") return showNotice(msg.message);
  if (msg.type === "error") return showNotice(`${msg.error.code}: ${msg.error.message}`);
  if (msg.type === "auction") {
    table.auction = msg.view;
    return scheduleRender();
  }
  if (msg.type === "trades") {
    table.trades = msg.trades;
    return scheduleRender();
  }
  if (msg.type !== "table" || msg.table_id !== table.id) return;
  if (msg.board) table.board = msg.board;
  for (const ev of msg.events) {
    if (ev.seq > table.lastSeq) {
      logEvent(ev);
      table.lastSeq = ev.seq;
    }
  }
  table.lastSeq = Math.max(table.lastSeq, msg.view.seq);
  table.view = msg.view;
  table.legal = msg.legal;
  table.deadline = msg.deadline_unix_ms;
  if (!msg.view.auction) table.auction = null;
  scheduleRender();
}

// Events can come many a second (bots are quick): draw at most every 50 ms, and each part only when
// what it shows changed, so a button is not replaced under the pointer while nothing moved.
let renderPending = false;
function scheduleRender() {
  if (renderPending) return;
  renderPending = true;
  setTimeout(() => {
    renderPending = false;
    renderTable();
  }, 50);
}

const drawn = {};
function changed(part, ...what) {
  const key = JSON.stringify(what);
  if (drawn[part] === key) return false;
  drawn[part] = key;
  return true;
}

const name = (seat) => (seat < 0 ? "the bank" : (table.view?.players[seat] || { name: `seat ${seat}` }).name);
const sqName = (i) => (table.board[i] || { name: `square ${i}` }).name;

function describe(ev) {
  switch (ev.type) {
    case "TurnStarted": return `Round ${ev.round}: ${name(ev.seat)}'s turn`;
    case "DiceRolled": return `${name(ev.seat)} rolled ${ev.d1} + ${ev.d2}`;
    case "Moved": return `${name(ev.seat)} moved to ${sqName(ev.to_square)}`;
    case "PurchaseOffered": return `${name(ev.seat)} may buy ${sqName(ev.square)} for ${money(ev.price)}`;
    case "PropertyBought": return `${name(ev.seat)} bought ${sqName(ev.square)} for ${money(ev.price)}`;
    case "PurchaseDeclined": return `${name(ev.seat)} declined ${sqName(ev.square)}`;
    case "AuctionStarted": return `Auction of ${sqName(ev.square)}`;
    case "BidPlaced": return `${name(ev.seat)} bid ${money(ev.amount)}`;
    case "AuctionSettled": return ev.winner >= 0 ? `${name(ev.winner)} won ${sqName(ev.square)} for ${money(ev.price)}` : `Nobody bought ${sqName(ev.square)}`;
    case "PaymentMade": return `${name(ev.debtor)} paid ${money(ev.amount)} to ${name(ev.creditor)} (${ev.reason})`;
    case "BankPaid": return `The bank paid ${name(ev.seat)} ${money(ev.amount)} (${ev.reason})`;
    case "BuildingBuilt": return `${name(ev.seat)} built on ${sqName(ev.square)} (level ${ev.level})`;
    case "PropertyMortgaged": return `${name(ev.seat)} mortgaged ${sqName(ev.square)} for ${money(ev.amount)}`;
    case "MortgageLifted": return `${name(ev.seat)} lifted the mortgage on ${sqName(ev.square)}`;
    case "SentToJail": return `${name(ev.seat)} went to jail`;
    case "PlayerBankrupt": return `${name(ev.seat)} is bankrupt (${ev.cause})`;
    case "TradeExecuted": return `Trade done between ${name(ev.proposer)} and ${name(ev.counterparty)}`;
    case "BetPlaced": return `${name(ev.seat)} bet on ${ev.numbers.join(", ")}`;
    case "BetSettled": return `Casino: the die shows ${ev.die}, ${name(ev.seat)} gets ${money(ev.payout || 0)}`;
    case "GameEnded": return `Game over: ${name(ev.winner)} wins (${ev.reason})`;
    case "TurnTimedOut": return `${name(ev.seat)} ran out of time`;
    default: {
      const rest = Object.entries(ev).filter(([k]) => k !== "type" && k !== "seq").map(([k, v]) => `${k}=${JSON.stringify(v)}`);
      return `${ev.type} ${rest.join(" ")}`.slice(0, 160);
    }
  }
}

function logEvent(ev) {
  if (ev.type === "ClockAdvanced") return;
  const li = h("li", { "data-seq": ev.seq, "data-type": ev.type, value: ev.seq }, describe(ev));
  const log = $("#log");
  log.prepend(li);
  while (log.children.length > 5000) log.lastChild.remove();
}

// Square i's place on the 11 x 11 grid: 0 bottom right, 10 bottom left, 20 top left, 30 top right.
function cell(i) {
  if (i <= 10) return [11, 11 - i];
  if (i <= 20) return [11 - (i - 10), 1];
  if (i <= 30) return [1, 1 + (i - 20)];
  return [1 + (i - 30), 11];
}

function renderBoard() {
  const v = table.view;
  const squares = table.board.map((sq) => {
    const [row, col] = cell(sq.index);
    const owner = v.owner[sq.index];
    const level = v.buildings[sq.index];
    const tokens = v.players.filter((p) => p.position === sq.index && !p.bankrupt);
    return h("div", {
      class: `sq${owner >= 0 ? " owner" + owner : ""}${v.mortgaged[sq.index] ? " mortgaged" : ""}`,
      style: `grid-row:${row};grid-column:${col}`,
      "data-square": sq.index,
      "data-owner": owner,
      title: `${sq.name}${sq.price ? " " + money(sq.price) : ""}${owner >= 0 ? ", owned by " + name(owner) : ""}`,
    },
      sq.group ? h("div", { class: `band g${sq.group}` }) : "",
      h("div", { class: "name" }, sq.name),
      sq.price ? h("div", { class: "price" }, money(sq.price)) : "",
      level ? h("div", { class: `bld${level === 5 ? " hotel" : ""}` }, level === 5 ? "H" : "⌂".repeat(level)) : "",
      h("div", { class: "tokens" }, tokens.map((p) => h("span", { class: `token seat${p.seat}`, "data-token": p.seat }, p.seat))));
  });
  const center = h("div", { class: "center" },
    h("div", { class: "dice" }, v.dice[0] ? `⚀ ${v.dice[0]} · ${v.dice[1]}` : ""),
    h("div", {}, `Round ${v.round} · ${v.phase}`),
    h("div", {}, `Jackpot ${money(v.jackpot)}`));
  $("#board").replaceChildren(...squares, center);
}

function renderPlayers() {
  const v = table.view;
  $("#players").replaceChildren(...v.players.map((p) =>
    h("div", { class: `player${p.seat === v.actor ? " acting" : ""}${p.bankrupt ? " bankrupt" : ""}`, "data-seat": p.seat },
      h("span", { class: `token seat${p.seat}` }, p.seat),
      h("span", {}, p.name + (p.seat === table.seat ? " (you)" : "")),
      h("span", { class: "cash" }, money(p.cash)),
      p.in_jail ? h("span", {}, "in jail") : "",
      p.place ? h("span", {}, `place ${p.place}`) : "",
      h("div", { class: "props" }, p.properties.map(sqName).join(", ")))));
}

const LABELS = {
  Roll: "Roll", BuyProperty: "Buy", DeclineProperty: "Decline (auction)", Pay: "Pay", EndTurn: "End turn",
  PayJailFine: "Pay jail fine", UseJailCard: "Use jail card", Surrender: "Surrender", ClaimRent: "Claim rent",
  RequestPause: "Ask for a pause", ConfirmBack: "I'm back", Bid: "Bid", PassBid: "Pass",
  AcceptTrade: "Accept trade", DeclineTrade: "Decline trade", DeclineBet: "Decline bet",
  Leave: "Leave the game",
};

function label(c) {
  if (c.type === "VotePause") return c.yes ? "Vote pause: yes" : "Vote pause: no";
  if ("square" in c) return `${c.type.replace(/([a-z])([A-Z])/g, "$1 $2")} · ${sqName(c.square)}`;
  if (c.type === "ChooseBusMove") return `Bus: ${c.steps} steps`;
  if (c.type === "Bid") return `Bid ${money(c.amount)}`;
  return LABELS[c.type] || c.type;
}

async function send(command) {
  $("#refusal").hidden = true;
  try {
    await call("command", { table_id: table.id, seat_token: seatToken(table.id), command });
  } catch (e) {
    const box = $("#refusal");
    box.hidden = false;
    box.dataset.rule = e.rule_id || "";
    box.textContent = `${e.rule_id ? "Rule " + e.rule_id + ": " : ""}${e.message} (${e.code})`;
  }
}

function renderCommands() {
  const v = table.view;
  const box = $("#commands");
  const st = v.finished
    ? `Game over: ${name(v.winner)} wins`
    : v.paused ? "Paused" : `${name(v.actor)} to act (${v.phase})${v.offer >= 0 && v.phase === "buy" ? ": " + sqName(v.offer) : ""}`;
  $("#status").textContent = st;
  if (table.seat < 0) return box.replaceChildren(h("em", {}, "Spectators see every move; only players act."));
  const simple = table.legal.filter((c) => !["PlaceBet", "ProposeTrade"].includes(c.type));
  box.replaceChildren(...simple.map((c) =>
    h("button", {
      class: c.type === "Leave" ? "cmd danger" : "cmd", "data-type": c.type, "data-square": c.square,
      // R3: leaving is bankruptcy to the bank, and cannot be taken back
      onclick: () => (c.type !== "Leave" || confirm("Leave the game? You go bankrupt to the bank.")) && send(strip(c)),
    }, label(c))));
}

const strip = (c) => {
  const out = { ...c };
  delete out.max_numbers;
  return out;
};

function renderTimer() {
  const t = $("#timer");
  const ms = table.deadline ? table.deadline - Date.now() : 0;
  t.textContent = table.view && !table.view.finished && ms > 0 ? `${(ms / 1000).toFixed(1)} s` : "";
  const a = table.auction;
  const at = $("#auction-timer");
  if (at && a && a.status === "open") at.textContent = `${Math.max(0, (a.deadline_unix_ms - Date.now()) / 1000).toFixed(1)} s`;
}
setInterval(renderTimer, 200);

// A panel that has nothing to show is emptied too: no hidden button stays around to be found.
function hide(box) {
  box.hidden = true;
  box.replaceChildren();
}

function renderAuction() {
  const box = $("#auction");
  const a = table.auction;
  const local = table.view && table.view.auction;
  if (!a && !local) return hide(box);
  box.hidden = false;
  if (!a) {
    box.replaceChildren(h("h3", {}, `Auction: ${sqName(local.square)}`), h("div", {}, `high bid ${money(local.high_bid)}`));
    return;
  }
  const mine = a.status === "open" && a.bidder === table.seat;
  const min = Math.max(Number(a.min_bid), Number(a.high_bid) + 1);
  const input = h("input", { id: "bid-amount", type: "number", value: min, min, step: 10 });
  box.replaceChildren(
    h("h3", {}, `Auction: ${sqName(a.square)} `, h("span", { id: "auction-timer", class: "timer" })),
    h("div", { class: "auction-state" }, a.status === "open"
      ? `high bid ${money(a.high_bid)}${a.high_bidder >= 0 ? " by " + name(a.high_bidder) : ""}; ${name(a.bidder)} bids now (from ${money(a.min_bid)})`
      : a.winner >= 0 ? `${name(a.winner)} won it for ${money(a.price)}` : "nobody bid"),
    mine ? h("div", {}, input,
      h("button", { id: "bid", onclick: () => send({ type: "Bid", amount: Number(input.value) }) }, "Bid"),
      h("button", { id: "pass", onclick: () => send({ type: "PassBid" }) }, "Pass")) : "");
}

function renderCasino() {
  const box = $("#casino");
  const bet = table.legal.find((c) => c.type === "PlaceBet");
  const v = table.view;
  if (!v.casino_open) return hide(box);
  box.hidden = false;
  if (!bet) return box.replaceChildren(h("h3", {}, "Casino"), h("div", {}, `${name(v.actor)} may bet; jackpot ${money(v.jackpot)}`));
  const picks = [1, 2, 3, 4, 5, 6].map((n) => h("label", {}, h("input", { type: "checkbox", class: "num", value: n }), n));
  box.replaceChildren(
    h("h3", {}, "Casino"),
    h("div", {}, `Pick up to ${bet.max_numbers} numbers; jackpot ${money(v.jackpot)}`),
    h("div", { class: "nums" }, picks),
    h("button", {
      id: "place-bet",
      onclick: () => send({ type: "PlaceBet", numbers: [...box.querySelectorAll(".num:checked")].map((x) => +x.value) }),
    }, "Bet"));
}

function renderTrade() {
  const box = $("#trade");
  const v = table.view;
  if (!v) return;
  const canPropose = table.legal.some((c) => c.type === "ProposeTrade");
  const incoming = (table.trades || []).filter((t) => t.status === "open");
  if (!canPropose && !incoming.length) return hide(box);
  box.hidden = false;
  const parts = [h("h3", {}, "Trade")];
  for (const t of incoming) {
    const terms = t.terms;
    const line = `${name(t.proposer)} → ${name(terms.counterparty)}: gives ${money(terms.give_cash)} ${terms.give_squares.map(sqName).join(", ")}; takes ${money(terms.take_cash)} ${terms.take_squares.map(sqName).join(", ")}`;
    parts.push(h("div", { class: "offer", "data-trade": t.trade_id }, line,
      terms.counterparty === table.seat ? [
        h("button", { onclick: () => send({ type: "AcceptTrade", trade_id: Number(t.trade_id) }) }, "Accept"),
        h("button", { onclick: () => send({ type: "DeclineTrade", trade_id: Number(t.trade_id) }) }, "Decline")] : ""));
  }
  if (canPropose) {
    const others = v.players.filter((p) => p.seat !== table.seat && !p.bankrupt);
    const who = h("select", { id: "trade-with" }, others.map((p) => h("option", { value: p.seat }, p.name)));
    const give = h("input", { id: "trade-give-cash", type: "number", value: 0, min: 0, step: 100 });
    const take = h("input", { id: "trade-take-cash", type: "number", value: 0, min: 0, step: 100 });
    const mine = h("select", { id: "trade-give-squares", multiple: true },
      v.players[table.seat].properties.map((i) => h("option", { value: i, "data-price": table.board[i].price }, `${sqName(i)} (${money(table.board[i].price)})`)));
    parts.push(h("div", { id: "trade-form" },
      h("label", {}, "with ", who), h("label", {}, " I give ", give), h("label", {}, " and ", mine),
      h("label", {}, " I take ", take),
      h("button", {
        id: "propose",
        onclick: () => send({
          type: "ProposeTrade", counterparty: +who.value, give_cash: +give.value, take_cash: +take.value,
          give_squares: [...mine.selectedOptions].map((o) => +o.value), take_squares: [], give_cards: [], take_cards: [],
        }),
      }, "Propose")));
  }
  box.replaceChildren(...parts);
}

function renderTable() {
  if (!table.view || !table.board.length) return;
  const v = table.view;
  document.body.dataset.seq = table.lastSeq;
  document.body.dataset.finished = v.finished ? "1" : "";
  document.body.dataset.actor = v.actor;  // whose decision it is, and which (tests and styles read them)
  document.body.dataset.phase = v.phase;
  if (changed("board", table.id, v.owner, v.buildings, v.mortgaged, v.players.map((p) => [p.position, p.bankrupt]), v.dice, v.round, v.phase, v.jackpot)) renderBoard();
  if (changed("players", table.id, v.players, v.actor)) renderPlayers();
  if (changed("commands", table.id, table.legal, v.actor, v.phase, v.finished, v.paused, v.offer)) renderCommands();
  if (changed("auction", table.id, table.auction, v.auction, table.seat)) renderAuction();
  if (changed("casino", table.id, v.casino_open, table.legal.some((c) => c.type === "PlaceBet"), v.jackpot)) renderCasino();
  if (changed("trade", table.id, table.trades, table.legal.some((c) => c.type === "ProposeTrade"), v.players.map((p) => p.properties))) renderTrade();
  renderTimer();
}

connect();
