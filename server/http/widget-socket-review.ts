// A widget's open visitor sockets are checked again when the widget is deleted, its identity
// secret replaced or its settings replaced: a socket whose handshake would now be refused is
// closed and hears nothing more (contract: trust on every channel). Any process may make the
// change and announces it through PostgreSQL (server/widgets/widget-changes.ts); every
// process, hearing it, applies the handshake's rule again to what each of its sockets of
// that widget presented, against the widget as it is now. Until that check is done the
// widget's events wait: notifications arrive in commit order, so whatever committed after the
// change reaches only the sockets the check kept.
import type { Logger } from 'pino';
import type { Socket } from 'socket.io';
import type { WidgetChangeFeed } from '../process-services.ts';
import type { WidgetIdentity } from '../widgets/visitor-identity.ts';

export type SocketReview<Presented> = {
  /** How many changes this process has heard: a handshake notes it before reading the widget. */
  heard(): number;
  /**
   * Watches an admitted socket; when a change was heard since `heardBefore` (the handshake may
   * have read the widget before it), checks the socket's widget again at once. Returns the unwatch.
   */
  watch(socket: Socket, widgetId: string, presented: Presented, heardBefore: number): () => void;
  /** Runs `emit` now, or once the check of the widget in progress is done. */
  deliver(widgetId: string, emit: () => void): void;
  stop(): void;
};

export function createSocketReview<Presented>(options: {
  changes: WidgetChangeFeed;
  /** The widget as it is now; null once deleted. */
  readWidget(widgetId: string): Promise<WidgetIdentity | null>;
  /** Whether the handshake's rule, applied to what the socket presented, admits it under `widget`. */
  admits(widget: WidgetIdentity, presented: Presented): Promise<boolean>;
  log: Logger;
}): SocketReview<Presented> {
  const { log } = options;
  const watched = new Map<string, Map<Socket, Presented>>();
  let heard = 0;
  // Widgets being checked: the events held for them, and whether another change came meanwhile.
  const checking = new Map<string, { again: boolean; held: (() => void)[] }>();

  const checkSockets = async (widgetId: string) => {
    const sockets = [...(watched.get(widgetId) ?? [])];
    if (sockets.length === 0) return;
    let widget: WidgetIdentity | null;
    try {
      widget = await options.readWidget(widgetId);
    } catch (error) {
      log.warn({ err: error, widgetId }, 'could not read a changed widget; dropping its sockets');
      for (const [socket] of sockets) drop(socket);
      return;
    }
    for (const [socket, presented] of sockets) {
      try {
        if (widget === null || !(await options.admits(widget, presented))) refuse(socket);
      } catch (error) {
        log.warn({ err: error, widgetId }, 'could not check a widget socket again; dropping it');
        drop(socket);
      }
    }
  };

  const check = (widgetId: string) => {
    if (!watched.has(widgetId)) return;
    const running = checking.get(widgetId);
    if (running) {
      running.again = true;
      return;
    }
    const entry = { again: false, held: [] as (() => void)[] };
    checking.set(widgetId, entry);
    void (async () => {
      try {
        do {
          entry.again = false;
          await checkSockets(widgetId);
        } while (entry.again);
      } finally {
        checking.delete(widgetId);
        for (const emit of entry.held) {
          try {
            emit();
          } catch (error) {
            log.error({ err: error, widgetId }, 'a held widget event could not be sent');
          }
        }
      }
    })();
  };

  const unsubscribe = options.changes.subscribe((widgetId) => {
    heard += 1;
    // null: announcements may have been missed while the LISTEN connection was away.
    if (widgetId === null) for (const id of [...watched.keys()]) check(id);
    else check(widgetId);
  });

  return {
    heard: () => heard,
    watch(socket, widgetId, presented, heardBefore) {
      let sockets = watched.get(widgetId);
      if (!sockets) watched.set(widgetId, (sockets = new Map()));
      sockets.set(socket, presented);
      if (heard !== heardBefore) check(widgetId);
      return () => {
        const current = watched.get(widgetId);
        current?.delete(socket);
        if (current?.size === 0) watched.delete(widgetId);
      };
    },
    deliver(widgetId, emit) {
      const running = checking.get(widgetId);
      if (running) running.held.push(emit);
      else emit();
    },
    stop: unsubscribe,
  };
}

/** Refused: told so, the client does not reconnect on its own (the widget page polls, and is refused there too). */
function refuse(socket: Socket) {
  // A socket still in its handshake has no namespace connection yet, only its transport.
  if (socket.connected) socket.disconnect(true);
  else socket.conn.close();
}

/** Not checked, so not kept: its transport closes, the client reconnects, and its handshake decides. */
function drop(socket: Socket) {
  socket.conn.close();
}
