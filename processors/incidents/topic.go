package incidents

// Topic carries every accepted incident insert and retraction (Msg values,
// keyed by server name, so one server's actions stay in order within a
// partition). The admin API and the file loader publish; the incidents
// processor, and any other processor that wants them, consume.
const Topic = "incidents"
