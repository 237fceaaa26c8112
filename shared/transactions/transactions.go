// Package transactions serves the order transaction endpoints (docs/openapi.yaml:
// schema Transaction, its status, the Transactions operations): list, count, read
// and create, with the money rules of authorization, capture, sale, void and
// refund.
//
// Items: a transaction is order#<order id>#transaction / IDSK(id), the
// partition the seed writes an order's transactions to, so a list is one
// Query of a key range (ids are time-ordered; seeded ids are below every
// assigned one). What the money rules need is the order's ledger,
// ordermoney / IDSK(order id): its authorizations with their captured
// amounts, its captures and sales with their refunded amounts, and the
// order's captured and refunded totals. It is built from
// the seeded transactions at the order's first create and from then on
// written, conditioned on the version read, in the transaction of every
// create, with the transaction, the order's financial_status, the Order
// event and the order_transactions/create notification. Creates of one
// order therefore take turns: no two can both spend the same uncaptured or
// refundable amount, of the order or of one capture or sale.
package transactions

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/parents"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// Kinds of schema Transaction.
const (
	Authorization = "authorization"
	Capture       = "capture"
	Sale          = "sale"
	Void          = "void"
	Refund        = "refund"
)

// Kinds lists the valid values of kind.
var Kinds = []string{Authorization, Capture, Sale, Void, Refund}

// Statuses of schema Transaction's status.
const (
	StatusSuccess = "success"
	StatusPending = "pending"
	StatusFailure = "failure"
	StatusError   = "error"
)

const (
	wrapper, plural = "transaction", "transactions"
	// Topic fires for every created transaction (schema WebhookTopic).
	Topic = "order_transactions/create"
	// SourceAPI is the source_name of a transaction created through the API.
	SourceAPI = "api"
	// sourceSeeded is the source_name of a seeded transaction that has none.
	sourceSeeded = "web"
	// TestGateway is the built-in test gateway: every transaction through
	// it succeeds.
	TestGateway = "bogus"
	// MaxAuthorizations bounds an order's authorizations (each is a line
	// of its ledger item).
	MaxAuthorizations = 100
	// MaxSettled bounds an order's captures and sales (each is a line of
	// its ledger item too, with what was refunded from it).
	MaxSettled      = 1000
	maxText         = 255
	ledgerPartition = "ordermoney"
)

// Transaction is the stored and returned record.
type Transaction struct {
	ID             int64           `json:"id"`
	OrderID        int64           `json:"order_id"`
	ParentID       *int64          `json:"parent_id"`
	Kind           string          `json:"kind"`
	Amount         admin.Money     `json:"amount"`
	Currency       string          `json:"currency"`
	Status         string          `json:"status"`
	Gateway        string          `json:"gateway"`
	Authorization  *string         `json:"authorization"`
	Message        *string         `json:"message"`
	Test           bool            `json:"test"`
	SourceName     string          `json:"source_name"`
	DeviceID       *int64          `json:"device_id"`
	UserID         *int64          `json:"user_id"`
	LocationID     *int64          `json:"location_id"`
	Receipt        json.RawMessage `json:"receipt"`
	ErrorCode      *string         `json:"error_code"`
	PaymentDetails json.RawMessage `json:"payment_details,omitempty"`
	CreatedAt      admin.Time      `json:"created_at"`
}

// Partition is the partition of an order's transactions.
func Partition(orderID int64) string {
	return parents.ChildPartition(parents.OrderPartition, orderID, "transaction")
}

func key(orderID, id int64) store.Key { return store.Key{PK: Partition(orderID), SK: records.IDSK(id)} }

func orderKey(id int64) store.Key { return store.Key{PK: parents.OrderPartition, SK: records.IDSK(id)} }

func ledgerKey(orderID int64) store.Key {
	return store.Key{PK: ledgerPartition, SK: records.IDSK(orderID)}
}

// item is the stored form of a new transaction.
func (t *Transaction) item() store.Item {
	k := key(t.OrderID, t.ID)
	return store.Item{PK: k.PK, SK: k.SK, Version: 1, Data: records.Encode(t)}
}

// decode reads a stored transaction, seeded or created here, filling what
// a seed may leave out: status success, source_name web, an empty receipt,
// the given currency (the shop's).
func decode(it *store.Item, currency string) (Transaction, error) {
	var t Transaction
	if err := records.Decode(it, &t); err != nil {
		return t, err
	}
	if t.Status == "" {
		t.Status = StatusSuccess
	}
	if t.SourceName == "" {
		t.SourceName = sourceSeeded
	}
	if t.Currency == "" {
		t.Currency = currency
	}
	if len(t.Receipt) == 0 || string(t.Receipt) == "null" {
		t.Receipt = json.RawMessage("{}")
	}
	if string(t.PaymentDetails) == "null" {
		t.PaymentDetails = nil
	}
	return t, nil
}

// Input is a transaction as POST accepts it. Every other property of the
// body (status, source_name, ...) is set by the service and ignored.
type Input struct {
	Amount   admin.Optional[json.RawMessage] `json:"amount"`
	Kind     *string                         `json:"kind"`
	ParentID admin.Optional[int64]           `json:"parent_id"`
	Currency admin.Optional[string]          `json:"currency"`
	Gateway  admin.Optional[string]          `json:"gateway"`
	Test     admin.Optional[bool]            `json:"test"`
}

// request is a validated Input: what can be checked without the order.
type request struct {
	kind     string
	amount   *admin.Money // nil: omitted
	parentID *int64
	currency string // "" when not given
	gateway  string // "" when not given
	test     *bool
}

// Messages of the amount checks.
const (
	msgNotNumber     = "must be a number"
	msgPositive      = "must be greater than 0"
	msgPlaces        = "must have at most 2 decimal places"
	msgParentInvalid = "must be greater than 0"
)

var msgMaxSettled = fmt.Sprintf("An order can have at most %d captures and sales", MaxSettled)

var msgTooLarge = "must be less than or equal to " + admin.MaxMoney.String()

// validate checks what needs no stored state.
func (in *Input) validate() (request, error) {
	var v admin.Validation
	var r request
	switch {
	case in.Kind == nil || strings.TrimSpace(*in.Kind) == "":
		v.Add("kind", admin.MsgBlank)
	case !slices.Contains(Kinds, strings.TrimSpace(*in.Kind)):
		v.Add("kind", admin.MsgNotInList+" ("+strings.Join(Kinds, ", ")+")")
	default:
		r.kind = strings.TrimSpace(*in.Kind)
	}
	if in.Amount.Set && !in.Amount.Null {
		m, err := admin.AmountJSON(in.Amount.Value)
		switch {
		case err == admin.ErrMoneyPlaces:
			v.Add("amount", msgPlaces)
		case err == admin.ErrMoneyRange:
			v.Add("amount", msgTooLarge)
		case err != nil:
			v.Add("amount", msgNotNumber)
		case m <= 0:
			v.Add("amount", msgPositive)
		default:
			r.amount = &m
		}
	}
	if in.ParentID.Set && !in.ParentID.Null {
		if in.ParentID.Value <= 0 {
			v.Add("parent_id", msgParentInvalid)
		} else {
			id := in.ParentID.Value
			r.parentID = &id
		}
	}
	if in.Currency.Set && !in.Currency.Null {
		r.currency = strings.ToUpper(strings.TrimSpace(in.Currency.Value))
	}
	if in.Gateway.Set && !in.Gateway.Null {
		g := strings.TrimSpace(in.Gateway.Value)
		switch {
		case g == "":
			v.Add("gateway", admin.MsgBlank)
		case utf8.RuneCountInString(g) > maxText:
			v.Add("gateway", admin.TooLong(maxText))
		default:
			r.gateway = g
		}
	}
	if in.Test.Set && !in.Test.Null {
		b := in.Test.Value
		r.test = &b
	}
	return r, v.Err()
}

// Verb is the events log's Order event verb (tag Events) of a transaction:
// <kind>_<status>.
func Verb(t *Transaction) string { return t.Kind + "_" + t.Status }

// noun names a kind in event messages.
var noun = map[string]string{
	Authorization: "An authorization", Capture: "A capture", Sale: "A sale", Void: "A void", Refund: "A refund",
}

func idString(id int64) string { return strconv.FormatInt(id, 10) }
