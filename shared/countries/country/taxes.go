package country

// The default taxes of a country created without a tax: its standard rate
// of VAT, GST or sales tax and that tax's usual abbreviation, and for its
// provinces the provincial rates. A country not listed starts with tax 0
// and no tax name; its provinces likewise. The shop owner's own rate (tax
// in the request, or an update) always wins: these are only defaults.
//
// Sources (standard rates in force in August 2025):
//   - EU member states: European Commission, "VAT rates applied in the
//     Member States of the European Union" (taxation-customs.ec.europa.eu),
//     with the 2025 changes: Estonia 24% from 1 July 2025, Romania 21% from
//     1 August 2025, Slovakia 23% from 1 January 2025, Finland 25.5% from
//     1 September 2024.
//   - Canada: Canada Revenue Agency, "GST/HST rates" (canada.ca): GST 5%,
//     HST 13% in Ontario, 14% in Nova Scotia (from 1 April 2025), 15% in New
//     Brunswick, Newfoundland and Labrador and Prince Edward Island; the
//     provincial sales taxes of British Columbia (PST 7%, gov.bc.ca),
//     Manitoba (RST 7%, gov.mb.ca), Saskatchewan (PST 6%, saskatchewan.ca)
//     and Quebec (QST 9.975%, revenuquebec.ca). A harmonized province's tax
//     is the provincial part of the HST (the HST less the 5% GST) with
//     tax_type harmonized; PST, RST and QST apply beside GST (tax_type null).
//   - United Kingdom: HMRC, "VAT rates" (gov.uk/vat-rates), 20%.
//   - Switzerland: Federal Tax Administration (estv.admin.ch), MWST 8.1%
//     from 1 January 2024. Norway: Skatteetaten, MVA 25%. Iceland: Skatturinn, VSK 24%.
//   - Australia: Australian Taxation Office (ato.gov.au), GST 10%. New
//     Zealand: Inland Revenue (ird.govt.nz), GST 15%.
//   - Japan: National Tax Agency (nta.go.jp), consumption tax 10%.
//     Singapore: IRAS (iras.gov.sg), GST 9% from 1 January 2024.
//   - South Africa: SARS (sars.gov.za), VAT 15%. Mexico: SAT (sat.gob.mx), IVA 16%.
//   - United States: no national sales tax; state rates vary by locality and
//     nexus, so every state starts at 0 for the owner to set.
var defaultTaxes = map[string]taxDefault{
	"AT": {"0.2", "USt"},
	"AU": {"0.1", "GST"},
	"BE": {"0.21", "BTW"},
	"BG": {"0.2", "DDS"},
	"CA": {"0.05", "GST"},
	"CH": {"0.081", "MWST"},
	"CY": {"0.19", "VAT"},
	"CZ": {"0.21", "DPH"},
	"DE": {"0.19", "MwSt"},
	"DK": {"0.25", "moms"},
	"EE": {"0.24", "KM"},
	"ES": {"0.21", "IVA"},
	"FI": {"0.255", "ALV"},
	"FR": {"0.2", "TVA"},
	"GB": {"0.2", "VAT"},
	"GR": {"0.24", "FPA"},
	"HR": {"0.25", "PDV"},
	"HU": {"0.27", "AFA"},
	"IE": {"0.23", "VAT"},
	"IS": {"0.24", "VSK"},
	"IT": {"0.22", "IVA"},
	"JP": {"0.1", "CT"},
	"LT": {"0.21", "PVM"},
	"LU": {"0.17", "TVA"},
	"LV": {"0.21", "PVN"},
	"MT": {"0.18", "VAT"},
	"MX": {"0.16", "IVA"},
	"NL": {"0.21", "BTW"},
	"NO": {"0.25", "MVA"},
	"NZ": {"0.15", "GST"},
	"PL": {"0.23", "VAT"},
	"PT": {"0.23", "IVA"},
	"RO": {"0.21", "TVA"},
	"SE": {"0.25", "Moms"},
	"SG": {"0.09", "GST"},
	"SI": {"0.22", "DDV"},
	"SK": {"0.23", "DPH"},
	"US": {"0", ""},
	"ZA": {"0.15", "VAT"},
}

// defaultProvinceTaxes are the provincial defaults, by country and province code.
var defaultProvinceTaxes = map[string]map[string]provinceTax{
	"CA": {
		"BC": {"0.07", "PST", ""},
		"MB": {"0.07", "RST", ""},
		"NB": {"0.1", "HST", Harmonized},
		"NL": {"0.1", "HST", Harmonized},
		"NS": {"0.09", "HST", Harmonized},
		"ON": {"0.08", "HST", Harmonized},
		"PE": {"0.1", "HST", Harmonized},
		"QC": {"0.09975", "QST", ""},
		"SK": {"0.06", "PST", ""},
	},
}

type taxDefault struct{ rate, name string }

type provinceTax struct{ rate, name, kind string }

// Tax types of a province (schema Country).
const (
	Harmonized = "harmonized"
	Compounded = "compounded"
)

// TaxTypes lists the tax_type values a province may have besides null.
var TaxTypes = []string{Harmonized, Compounded}

// DefaultTax returns a country's default rate and tax name (nil for none).
func DefaultTax(code string) (Rate, *string) {
	d, ok := defaultTaxes[code]
	if !ok {
		return 0, nil
	}
	return mustRate(d.rate), text(d.name)
}

func text(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
